package testdb

import (
	"context"
	"database/sql"
	"regexp"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"

	"storefront/internal/platform/store"
)

// counter wraps ent's driver and counts the statements sent outside
// transactions (a transaction's go through the driver it opens): the N+1
// guards count what the real code sends, as ent's todo example does.
type counter struct {
	dialect.Driver
	n     *atomic.Int64
	execs bool // count writes too, not only reads
}

func (d counter) Query(ctx context.Context, q string, args, v any) error {
	d.n.Add(1)
	return d.Driver.Query(ctx, q, args, v)
}

func (d counter) Exec(ctx context.Context, q string, args, v any) error {
	if d.execs {
		d.n.Add(1)
	}
	return d.Driver.Exec(ctx, q, args, v)
}

// CountStatements is an option of Open (and store.Open) that adds every
// statement, read or write, to n.
func CountStatements(n *atomic.Int64) store.Option {
	return store.WithDriverWrapper(func(d dialect.Driver) dialect.Driver { return counter{d, n, true} })
}

// CountReads adds every read (ent's Query) to n.
func CountReads(n *atomic.Int64) store.Option {
	return store.WithDriverWrapper(func(d dialect.Driver) dialect.Driver { return counter{d, n, false} })
}

// EachCounted is Each with a statement counter (CountStatements) on the
// driver, handed to fn beside the database.
func EachCounted(t *testing.T, fn func(t *testing.T, db *store.DB, n *atomic.Int64)) {
	for _, b := range Backends {
		t.Run(string(b), func(t *testing.T) {
			n := new(atomic.Int64)
			fn(t, Open(t, b, CountStatements(n)), n)
		})
	}
}

// CountTableReads adds to n every read of table (a SELECT whose FROM names
// it), inside transactions as well as outside: how often a path reads one
// aggregate, wherever the read is.
func CountTableReads(n *atomic.Int64, table string) store.Option {
	from := regexp.MustCompile(`(?i)\bFROM\s+[` + "`" + `"]?` + regexp.QuoteMeta(table) + "[`" + `"]?(\s|$)`)
	return store.WithDriverWrapper(func(d dialect.Driver) dialect.Driver { return tableReads{d, n, from} })
}

// tableReads counts reads matching from, and those of the transactions it
// opens.
type tableReads struct {
	dialect.Driver
	n    *atomic.Int64
	from *regexp.Regexp
}

func (d tableReads) Query(ctx context.Context, q string, args, v any) error {
	d.count(q)
	return d.Driver.Query(ctx, q, args, v)
}

func (d tableReads) count(q string) {
	if d.from.MatchString(q) {
		d.n.Add(1)
	}
}

func (d tableReads) Tx(ctx context.Context) (dialect.Tx, error) {
	tx, err := d.Driver.Tx(ctx)
	if err != nil {
		return nil, err
	}
	return tableReadsTx{tx, d}, nil
}

func (d tableReads) BeginTx(ctx context.Context, opts *sql.TxOptions) (dialect.Tx, error) {
	b, ok := d.Driver.(interface {
		BeginTx(context.Context, *sql.TxOptions) (dialect.Tx, error)
	})
	if !ok {
		return d.Tx(ctx)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return tableReadsTx{tx, d}, nil
}

type tableReadsTx struct {
	dialect.Tx
	d tableReads
}

func (t tableReadsTx) Query(ctx context.Context, q string, args, v any) error {
	t.d.count(q)
	return t.Tx.Query(ctx, q, args, v)
}

// ExecContext and QueryContext keep the raw statements a domain sends
// through ent's transaction (tx.ExecContext) working under the count.
func (t tableReadsTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return t.Tx.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, q, args...)
}

func (t tableReadsTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	t.d.count(q)
	return t.Tx.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, q, args...)
}

func (d tableReads) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return d.Driver.(interface {
		ExecContext(context.Context, string, ...any) (sql.Result, error)
	}).ExecContext(ctx, q, args...)
}

func (d tableReads) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	d.count(q)
	return d.Driver.(interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}).QueryContext(ctx, q, args...)
}
