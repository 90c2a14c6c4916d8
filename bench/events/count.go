package main

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"strings"
	"sync/atomic"

	"entgo.io/ent/dialect"
)

// hookStmts counts the statements on the webhook tables (through ent: the
// webhooks package writes them through ent only) and the commits that
// wrote them: a measure of the webhook's database work that does not
// depend on what else the machine runs, as orders/s does.
type hookStmts struct {
	insert, update, read, commits atomic.Int64
	rows                          atomic.Int64 // rows the INSERTs and UPDATEs wrote (as the driver reports them)
}

var counted hookStmts

func (c *hookStmts) String() string {
	return fmt.Sprintf("webhook_delivery statements: %d INSERT, %d UPDATE, %d SELECT; %d rows written; %d commits writing it",
		c.insert.Load(), c.update.Load(), c.read.Load(), c.rows.Load(), c.commits.Load())
}

// note counts query; it reports whether it wrote the webhook table.
func (c *hookStmts) note(query string) bool {
	if !strings.Contains(query, "webhook_delivery") {
		return false
	}
	switch q := strings.TrimSpace(query); {
	case strings.HasPrefix(q, "INSERT"):
		c.insert.Add(1)
	case strings.HasPrefix(q, "UPDATE"):
		c.update.Add(1)
	case strings.HasPrefix(q, "SELECT"):
		c.read.Add(1)
		return false
	default:
		return false
	}
	return true
}

type countDriver struct{ dialect.Driver }

func (d countDriver) Exec(ctx context.Context, query string, args, v any) error {
	wrote := counted.note(query)
	err := d.Driver.Exec(ctx, query, args, v)
	if wrote {
		counted.commits.Add(1) // outside a transaction: its own commit
		counted.affected(v, err)
	}
	return err
}

// affected adds the rows an Exec's result reports (ent passes a
// *sql.Result; MariaDB counts a row an upsert left alone as 0).
func (c *hookStmts) affected(v any, err error) {
	if r, ok := v.(*stdsql.Result); ok && err == nil && *r != nil {
		if n, err := (*r).RowsAffected(); err == nil {
			c.rows.Add(n)
		}
	}
}

func (d countDriver) Query(ctx context.Context, query string, args, v any) error {
	counted.note(query)
	return d.Driver.Query(ctx, query, args, v)
}

func (d countDriver) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return &countTx{Tx: tx}, nil
}

type countTx struct {
	dialect.Tx
	wrote bool
}

func (t *countTx) Exec(ctx context.Context, query string, args, v any) error {
	wrote := counted.note(query)
	err := t.Tx.Exec(ctx, query, args, v)
	if wrote {
		t.wrote = true
		counted.affected(v, err)
	}
	return err
}

func (t *countTx) Query(ctx context.Context, query string, args, v any) error {
	if counted.note(query) {
		t.wrote = true
	}
	return t.Tx.Query(ctx, query, args, v)
}

func (t *countTx) Commit() error {
	err := t.Tx.Commit()
	if err == nil && t.wrote {
		counted.commits.Add(1)
	}
	return err
}

// Raw statements in a transaction (store.Exec) go through these.
type execQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
}

func (t *countTx) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	if counted.note(query) {
		t.wrote = true
	}
	return t.Tx.(execQuerier).ExecContext(ctx, query, args...)
}

func (t *countTx) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	if counted.note(query) {
		t.wrote = true
	}
	return t.Tx.(execQuerier).QueryContext(ctx, query, args...)
}

func (d countDriver) ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	if counted.note(query) {
		counted.commits.Add(1)
	}
	return d.Driver.(execQuerier).ExecContext(ctx, query, args...)
}

func (d countDriver) QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error) {
	counted.note(query)
	return d.Driver.(execQuerier).QueryContext(ctx, query, args...)
}
