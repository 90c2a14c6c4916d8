package store

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"

	"storefront/ent"
)

// IsDuplicate reports a unique-key violation, whichever way the write was
// sent: ent's constraint error, MySQL's 1062, SQLite's UNIQUE or PRIMARY KEY
// constraint. Business keys lean on it (a ledger row's biz key, an
// idempotency key, a payment event id): the second write of the same thing
// fails here and means "already done".
func IsDuplicate(err error) bool {
	if err == nil {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == 2067 || se.Code() == 1555 // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
	}
	return ent.IsConstraintError(err)
}
