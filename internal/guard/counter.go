package guard

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/internal/platform/store"
)

// A guarded counter is a table of rows keyed by (scope, holder), each
// counting units that may only grow within a limit. Like stock it must not
// be oversold by any interleaving, so it is written the way stock is:
// inside the seller's transaction, in the lock order (after the source's
// row), by an upsert that either stays within the limit or fails the
// transaction. docs/checkout.md, "Adding a guarded counter".

// CounterKind names a counter's table and columns. The table has a unique
// key on (Scope, Holder).
type CounterKind struct {
	Table, Scope, Holder, Units string
	// Exceeded is the error a holder past the limit answers.
	Exceeded error
}

// Counter is what one transaction adds to one scope of a counter: Adds[i]
// units to Holders[i] (ascending: the order their rows are locked), each
// holder's total to stay at most Limit.
type Counter struct {
	Kind    *CounterKind
	Scope   int64
	Holders []string
	Adds    []int64
	Limit   int64
}

// Add is the counter of kind that adds n for holder in scope, within
// limit.
func Add(kind *CounterKind, scope int64, holder string, n, limit int64) Counter {
	return Counter{Kind: kind, Scope: scope, Holders: []string{holder}, Adds: []int64{n}, Limit: limit}
}

// row writes the counter row of holder j as inserted: its units are the
// ones added.
func (c *Counter) row(j int, v store.Values) {
	v.Int(c.Kind.Scope, c.Scope)
	v.Str(c.Kind.Holder, c.Holders[j])
	v.Int(c.Kind.Units, c.Adds[j])
}

// CounterLimit is the error of a holder a counter would take past its
// limit: its kind's Exceeded.
type CounterLimit struct {
	Kind   *CounterKind
	Scope  int64
	Holder string
	Add    int64
}

func (e *CounterLimit) Error() string {
	return fmt.Sprintf("%v: %s %d allows %s at most its limit, %d more is too many", e.Kind.Exceeded, e.Kind.Table, e.Scope, e.Holder, e.Add)
}

func (e *CounterLimit) Unwrap() error { return e.Kind.Exceeded }

// AddCounters adds counters on the plain path, inside the seller's
// transaction after its stock: each within its limit, or a *CounterLimit
// and nothing of the transaction may commit.
func AddCounters(ctx context.Context, tx *ent.Tx, counters []Counter) error {
	for i := range counters {
		if err := counters[i].addPlain(ctx, tx); err != nil {
			return err
		}
	}
	return nil
}

// addPlain is the plain path's renderer: per holder, the row is made sure
// of by an upsert that changes nothing when it exists (on MySQL that takes
// the row's exclusive lock at once, where a plain INSERT meeting the key
// would take a shared lock and two racing orders of one holder would
// deadlock upgrading it), then a conditional UPDATE adds within the limit.
// Neither statement reads the source's row: a subquery in an UPDATE is a
// locking read there, and shared locks on a pool row deadlock its CAS.
func (c *Counter) addPlain(ctx context.Context, tx *ent.Tx) error {
	for j, h := range c.Holders {
		empty := store.NewInsert(c.Kind.Table).Row(func(v store.Values) {
			v.Int(c.Kind.Scope, c.Scope)
			v.Str(c.Kind.Holder, h)
			v.Int(c.Kind.Units, 0)
		})
		if err := store.EnsureRow(ctx, tx, empty, c.Kind.Scope, c.Kind.Holder); err != nil {
			return fmt.Errorf("counting %s of %s %d: %w", c.Kind.Units, c.Kind.Table, c.Scope, err)
		}
		res, err := tx.ExecContext(ctx, "UPDATE "+c.Kind.Table+" SET "+c.Kind.Units+" = "+c.Kind.Units+" + ? WHERE "+
			c.Kind.Scope+" = ? AND "+c.Kind.Holder+" = ? AND "+c.Kind.Units+" + ? <= ?", c.Adds[j], c.Scope, h, c.Adds[j], c.Limit)
		if err != nil {
			return fmt.Errorf("counting %s of %s %d: %w", c.Kind.Units, c.Kind.Table, c.Scope, err)
		}
		if moved, err := res.RowsAffected(); err != nil {
			return err
		} else if moved != 1 {
			return &CounterLimit{Kind: c.Kind, Scope: c.Scope, Holder: h, Add: c.Adds[j]}
		}
	}
	return nil
}
