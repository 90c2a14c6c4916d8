package store

import (
	"database/sql/driver"
	"errors"
	"net"
	"strings"

	"storefront/ent"
)

// errorReader reads one driver's errors (errors_mysql.go, errors_sqlite.go,
// errors_postgres.go). Errors are typed by their driver, so each reader
// answers only for its own and the rest of store asks them all.
type errorReader interface {
	// retryCause names a transient conflict worth running the transaction
	// again for ("deadlock", "lock_wait", "busy", "serialization"), or "".
	retryCause(err error) string
	// duplicate reports a unique-key violation (ok: err is this driver's),
	// and the index violated when the driver says.
	duplicate(err error) (dup bool, index string, ok bool)
	// answered reports an error the server sent in answer to a statement
	// (it ran, and stopped there), as opposed to one of the connection.
	answered(err error) bool
	// connErr reports a connection that is gone or was never made.
	connErr(err error) bool
}

var errorReaders []errorReader

// RetryCause names a transient conflict worth retrying, or "" for anything else.
func RetryCause(err error) string {
	if err == nil {
		return ""
	}
	for _, r := range errorReaders {
		if c := r.retryCause(err); c != "" {
			return c
		}
	}
	return ""
}

// IsDuplicate reports a unique-key violation, whichever way the write was
// sent: ent's constraint error or the driver's own. Business keys lean on it
// (a ledger row's biz key, an idempotency key, a payment event id): the
// second write of the same thing fails here and means "already done".
func IsDuplicate(err error) bool {
	if err == nil {
		return false
	}
	for _, r := range errorReaders {
		if dup, _, ok := r.duplicate(err); ok {
			return dup
		}
	}
	return ent.IsConstraintError(err)
}

// IsDuplicateOf reports a unique-key violation of the index named index
// (ent's name for it, as "idempotency_user_id_key"). A driver that does not
// name the index (SQLite) answers for any duplicate.
func IsDuplicateOf(err error, index string) bool {
	for _, r := range errorReaders {
		if dup, name, ok := r.duplicate(err); ok {
			return dup && (name == "" || strings.Contains(name, index))
		}
	}
	return false
}

// IsAnswered reports an error the server answered a statement with: the
// statement ran and stopped there, and the connection is fine.
func IsAnswered(err error) bool {
	for _, r := range errorReaders {
		if r.answered(err) {
			return true
		}
	}
	return false
}

func isConnErr(err error) bool {
	if errors.Is(err, driver.ErrBadConn) {
		return true
	}
	for _, r := range errorReaders {
		if r.connErr(err) {
			return true
		}
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"connection refused", "bad connection", "broken pipe", "connection reset", "i/o timeout"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
