package store

import (
	"errors"

	"modernc.org/sqlite"
)

type sqliteErrors struct{}

func init() { errorReaders = append(errorReaders, sqliteErrors{}) }

func (sqliteErrors) retryCause(err error) string {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return "busy"
		}
	}
	return ""
}

// duplicate: SQLITE_CONSTRAINT_UNIQUE or _PRIMARYKEY; the message names
// the columns, not the index.
func (sqliteErrors) duplicate(err error) (bool, string, bool) {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false, "", false
	}
	return se.Code() == 2067 || se.Code() == 1555, "", true
}

func (sqliteErrors) answered(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se)
}

func (sqliteErrors) connErr(error) bool { return false }
