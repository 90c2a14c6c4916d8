package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/internal/vocab/errs"
)

// ErrUnavailable marks a database that cannot be reached.
var ErrUnavailable = errs.New(errs.Unavailable, "database unavailable")

type txKey struct{}

// WithTx runs fn in one transaction: commit on nil, roll back on error or
// panic. It refuses to nest, because a nested "transaction" that silently joins
// the outer one hides where a write really commits.
//
// fn may run more than once: on a deadlock (MySQL 1213), a lock-wait timeout
// (1205) or SQLite busy the whole transaction is retried up to twice with
// 10 ms + 0–20 ms backoff (seed 003, 6.3); PostgreSQL's deadlock, serialization failure and lock
// timeout alike (errors_postgres.go). Business errors are never retried.
//
// ctx, as fn receives it, carries the database's dialect: the functions of
// store that write a statement inside a transaction (InsertNew) read it there.
func WithTx(ctx context.Context, db *DB, fn func(ctx context.Context, tx *ent.Tx) error) error {
	if ctx.Value(txKey{}) != nil {
		return errors.New("store.WithTx: nested transaction")
	}
	ctx = context.WithValue(ctx, txKey{}, db.Dialect)
	return Retry(ctx, func() error { return runTx(ctx, db.Client, fn) })
}

// dialectIn is the dialect of the transaction ctx carries (WithTx).
func dialectIn(ctx context.Context) Dialect {
	d, ok := ctx.Value(txKey{}).(Dialect)
	if !ok {
		panic("store: a statement of a transaction written outside store.WithTx")
	}
	return d
}

// Retry runs one transaction attempt, and again on a deadlock, a lock-wait
// timeout or SQLite busy (RetryCause): WithTx's policy.
func Retry(ctx context.Context, attempt func() error) error {
	return Attempts(ctx, attempt, nil)
}

// Attempts is Retry for a caller that may also ask, from an attempt's error,
// for one more run that changes how it runs (again: the group-commit batch
// reading its keys first, or locking before it reads); each of those runs
// is bounded by the caller, and every run counts in one loop, never nested
// inside another's retries. Transient conflicts run again at most twice
// (on Galera until ctx's deadline: maxConflictRetries).
func Attempts(ctx context.Context, attempt func() error, again func(err error) bool) error {
	var err error
	for conflicts := 0; ; {
		err = attempt()
		if again != nil && err != nil && again(err) {
			continue
		}
		cause := RetryCause(err)
		if cause == "" || conflicts == maxConflictRetries() {
			break
		}
		conflicts++
		OnRetry(cause)
		t := time.NewTimer(conflictBackoff(conflicts))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}

// OnRetry is called with the cause of every transaction retry (metrics hook).
var OnRetry = func(cause string) {}

func runTx(ctx context.Context, c *ent.Client, fn func(context.Context, *ent.Tx) error) (err error) {
	tx, err := c.Tx(ctx)
	if err != nil {
		return Classify(err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(ctx, tx); err != nil {
		if ctx.Err() != nil {
			// The caller has given up. ROLLBACK on a connection to a server
			// that stopped answering waits as long as the server does, so it
			// must not hold the caller; database/sql discards the connection.
			go tx.Rollback() //nolint:errcheck
			return err
		}
		_ = tx.Rollback()
		return err
	}
	return commit(ctx, tx)
}

// ErrCommitUnknown: the caller's deadline passed while COMMIT was in flight,
// so whether the transaction took effect is not known yet. It wraps
// ErrUnavailable: the client retries (with its idempotency key, which replays
// the order if the commit did land).
var ErrCommitUnknown = errors.Join(ErrUnavailable, errors.New("commit outcome unknown"))

// commit commits tx, but answers no later than ctx's end. Drivers do not
// watch the context during COMMIT (go-sql-driver/mysql sends it with no
// deadline), so to a server that stopped answering it blocks as long as the
// server does: seen as a 6 s answer to a request with a 2 s timeout while
// MariaDB was frozen. The commit itself goes on; database/sql returns the
// connection when it ends.
func commit(ctx context.Context, tx *ent.Tx) error {
	if ctx.Done() == nil {
		return classifyCommit(tx.Commit())
	}
	done := make(chan error, 1)
	go func() { done <- tx.Commit() }()
	select {
	case err := <-done:
		return classifyCommit(err)
	case <-ctx.Done():
		select {
		case err := <-done: // both ready: the real answer wins
			return classifyCommit(err)
		default:
			return fmt.Errorf("%w: %w", ErrCommitUnknown, ctx.Err())
		}
	}
}

func classifyCommit(err error) error {
	if err != nil {
		return Classify(fmt.Errorf("commit: %w", err))
	}
	return nil
}

// Classify turns connection-level failures and conflicts past their retries
// into ErrUnavailable so callers can answer "retry later" instead of
// "internal error".
func Classify(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	// A conflict that outlived its retries (a deadlock, a lock wait past its
	// timeout, SQLite busy) is the database's load, not a fault: the caller
	// may try again.
	if isConnErr(err) || RetryCause(err) != "" || wsrepUnavailable(err) {
		return errors.Join(ErrUnavailable, err)
	}
	return err
}

// Savepoint runs fn inside a savepoint of tx: when fn fails, what it wrote
// is rolled back and the rest of the transaction goes on (one step that
// may not hold, such as paying a closed order again, inside a payment's
// transaction that must commit either way). SQLite, MySQL and PostgreSQL
// spell it alike. name must be a plain identifier.
func Savepoint(ctx context.Context, tx *ent.Tx, name string, fn func() error) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return fmt.Errorf("savepoint %s: %w", name, err)
	}
	if err := fn(); err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rerr != nil {
			return fmt.Errorf("%w (and rolling back to savepoint %s: %w)", err, name, rerr)
		}
		return err
	}
	if _, err := tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name); err != nil {
		return fmt.Errorf("releasing savepoint %s: %w", name, err)
	}
	return nil
}
