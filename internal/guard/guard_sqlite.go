package guard

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/internal/platform/store"
)

// SQLite renders guards in the group-commit batch on SQLite
// (inventory.WriteLocked), statement by statement under the database's one
// write lock: a claim as on the plain path (TakeRows), a counter in one
// upsert.
type SQLite struct{}

// Counter adds a counter's units in one upsert whose condition keeps each
// holder within the limit: the caller decided from an exact read, and the
// check stays in the statement, which then fails the batch rather than
// pass it.
func (SQLite) Counter(ctx context.Context, tx *ent.Tx, c *Counter) error {
	k := c.Kind
	ins := store.NewInsert(k.Table)
	for j := range c.Holders {
		ins.Row(func(v store.Values) { c.row(j, v) })
	}
	q, args := ins.SQL()
	q += " ON CONFLICT (" + k.Scope + ", " + k.Holder + ") DO UPDATE SET " + k.Units + " = " + k.Units + " + excluded." + k.Units +
		" WHERE " + k.Units + " + excluded." + k.Units + " <= ?"
	res, err := tx.ExecContext(ctx, q, append(args, c.Limit)...)
	if err != nil {
		return fmt.Errorf("counting %s of %s %d: %w", k.Units, k.Table, c.Scope, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(len(c.Holders)) {
		return fmt.Errorf("%w: %s %d, %d of %d holders within the limit under the lock", k.Exceeded, k.Table, c.Scope, n, len(c.Holders))
	}
	return nil
}
