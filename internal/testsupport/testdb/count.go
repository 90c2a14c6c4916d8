package testdb

import (
	"context"
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
