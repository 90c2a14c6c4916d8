package store

import (
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

type postgresErrors struct{}

func init() { errorReaders = append(errorReaders, postgresErrors{}) }

// retryCause: the SQLSTATEs that mean "run it again" (appendix A of the
// PostgreSQL manual). 55P03 is lock_timeout's, the batch's bound on its
// lock waits, as 1205 is on MySQL.
func (postgresErrors) retryCause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "40P01":
			return "deadlock"
		case "40001":
			return "serialization"
		case "55P03":
			return "lock_wait"
		}
	}
	return ""
}

// duplicate: 23505 unique_violation, naming its constraint (ent's index
// name).
func (postgresErrors) duplicate(err error) (bool, string, bool) {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false, "", false
	}
	return pe.Code == "23505", pe.ConstraintName, true
}

func (postgresErrors) answered(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe)
}

// connErr: a connection gone, or refused for want of room: 53300
// too_many_connections ("sorry, too many clients already", a role's or a
// database's CONNECTION LIMIT, the slots kept for superusers) is the server
// full for a moment, as a pool's wait is, and 57P03 cannot_connect_now one
// starting up or shutting down: the caller retries later (UNAVAILABLE),
// never an INTERNAL.
func (postgresErrors) connErr(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "53300" || pe.Code == "57P03") {
		return true
	}
	return pgconn.SafeToRetry(err)
}
