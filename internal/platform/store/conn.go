package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Conn is one connection of the Batch pool carrying one transaction whose
// statements its caller sends as text, COMMIT included: the group-commit
// batch writes and commits in one round trip, so no Go code runs between its
// row locks and its COMMIT. Conn owns the rest of what WithTx owns for
// ent's transactions: BEGIN, ROLLBACK of a transaction left open, the
// caller's deadline, and never pooling a connection whose transaction may
// still be open.
type Conn struct {
	c *sql.Conn
	// open: a transaction is open and no statement sent since ended it.
	open bool
	// unknown: whether the last statement committed is not known (cut off,
	// unreadable): the connection must not serve anyone else.
	unknown bool
}

// OnConn runs fn on a connection of the Batch pool. A transaction fn leaves
// open is rolled back; a connection in an unknown state is closed instead of
// going back to the pool; a panic does the same and goes on.
func (d *DB) OnConn(ctx context.Context, fn func(ctx context.Context, c *Conn) error) (err error) {
	if d.Batch == nil {
		return errors.New("store.OnConn: this database has no batch pool")
	}
	sc, err := d.Batch.Conn(ctx)
	if err != nil {
		return Classify(err)
	}
	c := &Conn{c: sc}
	defer sc.Close()
	defer func() {
		if p := recover(); p != nil {
			c.discard()
			panic(p)
		}
		if c.open && !c.unknown {
			if _, rerr := sc.ExecContext(ctx, "ROLLBACK"); rerr != nil {
				c.discard()
			}
		}
		if c.unknown {
			c.discard()
		}
	}()
	return fn(ctx, c)
}

// Begin opens the transaction with its own round trip (a caller that must
// lock rows before it reads them); set, if not empty, is a SET list for the
// session sent in the same trip first (the batch bounds its lock waits).
func (c *Conn) Begin(ctx context.Context, set string) error {
	q := "START TRANSACTION"
	if set != "" {
		q = "SET " + set + "; " + q
	}
	if _, err := c.c.ExecContext(ctx, q); err != nil {
		c.unknown = true
		return Classify(err)
	}
	c.open = true
	return nil
}

// Send runs q, several statements in one query, and scans every row of its
// one result set (its final SELECT). q opens the transaction itself unless
// Begin did, and ends it with COMMIT. On an error the server reports, it
// stopped there with the transaction open: Send rolls it back in one more
// trip, running after (e.g. "SET SESSION …; SELECT @c", whose one row goes to
// scanAfter: user variables outlive the rollback) and returns the server's
// error. When the caller's deadline cuts q off, whether it committed is for
// the server to know: ErrCommitUnknown, and the connection goes.
func (c *Conn) Send(ctx context.Context, q string, scan func(*sql.Rows) error, after string, scanAfter func(*sql.Rows) error) error {
	c.open = true // q holds one from its first statement on
	err := queryAll(ctx, c.c, q, scan)
	if err == nil {
		c.open = false
		return nil
	}
	if IsAnswered(err) && ctx.Err() == nil {
		if rerr := queryAll(ctx, c.c, "ROLLBACK; "+after, scanAfter); rerr != nil {
			c.unknown = true
			return fmt.Errorf("%w (and rolling back: %w)", err, rerr)
		}
		c.open = false
		return err
	}
	c.unknown = true
	if ctx.Err() != nil || isConnErr(err) {
		return fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return err
}

// QueryContext reads through the connection (inside its transaction once
// one is open): the batch's reads go on the connection that may hold the
// rows locked, never on a second one that could wait behind them.
func (c *Conn) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return c.c.QueryContext(ctx, q, args...)
}

// discard makes database/sql close the connection instead of pooling it
// again: its transaction's state is unknown.
func (c *Conn) discard() {
	_ = c.c.Raw(func(any) error { return driver.ErrBadConn })
}

// queryAll runs the multi-statement q and scans every row of its one result
// set (the final SELECT). The statements before it return no rows; their
// errors, if any, surface while stepping over them.
//
// A panic while reading the answer leaves the connection and its
// transaction in an unknown state, as a cut connection does, and is
// answered as one (driver.ErrBadConn: Send says ErrCommitUnknown), logged
// with its stack: go-sql-driver/mysql v1.10.1 panics in readColumns
// (slice bounds out of range) on a result cut short while a Galera node
// rejoins.
func queryAll(ctx context.Context, c *sql.Conn, q string, scan func(*sql.Rows) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.ErrorContext(ctx, "reading a multi-statement answer panicked: the connection's state is unknown",
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%w: reading the answer panicked: %v", driver.ErrBadConn, p)
		}
	}()
	rs, err := c.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rs.Close()
	for !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		if !rs.NextResultSet() {
			if err := rs.Err(); err != nil {
				return err
			}
			return errors.New("the query returned no result")
		}
	}
	for more := true; more; more = rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	for rs.NextResultSet() { // drain: a later error must not go unseen
	}
	return rs.Err()
}
