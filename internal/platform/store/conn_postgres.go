package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
)

// PostgresResult is what one statement of SendPostgres returned: its
// command tag ("INSERT 0 3", "COMMIT") and its rows, each column as the
// server's text (a NULL as "").
type PostgresResult struct {
	Tag  string
	Rows [][]string
}

// BeginPostgres opens the transaction with its own round trip (a batch
// that locks rows before it reads them); local, if not empty, is a SET
// LOCAL list for the transaction, sent in the same trip (the batch bounds
// its lock waits). SET LOCAL ends with the transaction, so nothing of it
// outlives the batch on the pooled connection.
func (c *Conn) BeginPostgres(ctx context.Context, local string) error {
	q := "BEGIN"
	if local != "" {
		q += "; SET LOCAL " + local
	}
	if _, err := c.c.ExecContext(ctx, q); err != nil {
		c.unknown = true
		return Classify(err)
	}
	c.open = true
	return nil
}

// SendPostgres runs q, several statements, as one simple-protocol query on
// PostgreSQL: the server runs them in order, stops at the first error, and
// answers with every statement's result in one trip. q opens the
// transaction itself (BEGIN) unless BeginPostgres did, and ends it with
// COMMIT. It is written as all raw SQL here is (dialect.go: backticks) and
// rebound as every statement is; its values must be inline (PostgresText),
// the simple protocol has no parameters.
//
// It returns the results read, the failed statement's last. committed
// says whether a COMMIT ran (its tag came back): the server's word, so an
// error after it is not a rolled-back batch. On an error the server
// reports before COMMIT the transaction is aborted (or still open):
// SendPostgres rolls it back in one more trip and returns the server's
// error. When the caller's deadline cuts q off, whether it committed is for
// the server to know: ErrCommitUnknown, and the connection goes.
func (c *Conn) SendPostgres(ctx context.Context, q string) (res []PostgresResult, committed bool, err error) {
	c.open = true // q holds one from its first statement on
	var status byte
	err = c.c.Raw(func(dc any) (err error) {
		if t, ok := dc.(traced); ok {
			// A wrapped connection (tracing): the batch's one query gets
			// the span every other statement gets from the wrapper.
			var end func(error)
			ctx, end = t.Statement(ctx, q)
			defer func() { end(err) }()
			dc = t.Raw()
		}
		pc, ok := dc.(*pgConn)
		if !ok {
			return fmt.Errorf("store.SendPostgres: the connection is a %T, not PostgreSQL's", dc)
		}
		pg := pc.Conn.Conn().PgConn()
		results, err := pg.Exec(ctx, rebind(q, nil)).ReadAll()
		res = make([]PostgresResult, len(results))
		for i, r := range results {
			res[i].Tag = r.CommandTag.String()
			committed = committed || res[i].Tag == "COMMIT"
			res[i].Rows = make([][]string, len(r.Rows))
			for j, row := range r.Rows {
				res[i].Rows[j] = make([]string, len(row))
				for k, col := range row {
					res[i].Rows[j][k] = string(col)
				}
			}
		}
		status = pg.TxStatus()
		if err == nil || !IsAnswered(err) || ctx.Err() != nil || status == 'I' {
			return err
		}
		// 'T' or 'E': the transaction is still open (aborted), in this
		// session only; roll it back before the connection is given back.
		if _, rerr := pg.Exec(ctx, "ROLLBACK").ReadAll(); rerr != nil {
			return &rollbackError{err, rerr}
		}
		status = pg.TxStatus()
		return err
	})
	var rb *rollbackError
	switch {
	case err == nil:
		c.open = false
		return res, committed, nil
	case errors.As(err, &rb):
		c.unknown = true
		return res, committed, fmt.Errorf("%w (and rolling back: %w)", rb.err, rb.rollback)
	case IsAnswered(err) && ctx.Err() == nil && status == 'I':
		c.open = false
		return res, committed, err
	}
	c.unknown = true
	if !committed && (ctx.Err() != nil || isConnErr(err)) {
		return res, false, fmt.Errorf("%w: %w", ErrCommitUnknown, err)
	}
	return res, committed, err
}

// traced is a connection a ConnectorWrapper wrapped: the driver's own
// beneath it, and a span for a statement sent past the wrapper.
type traced interface {
	Raw() driver.Conn
	Statement(ctx context.Context, query string) (context.Context, func(error))
}

// rollbackError is an error of the batch whose ROLLBACK failed too.
type rollbackError struct{ err, rollback error }

func (e *rollbackError) Error() string { return e.err.Error() }
