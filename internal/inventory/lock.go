package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/internal/listing"
	"storefront/internal/vocab/errs"
)

// Lock-at-order stock (seed 003, 5.2): an order raises lock_stock (Take
// with Sale.Lock), payment turns the lock into a deduction (Deduct), a close
// gives the lock back (Release). Available stock is stock - lock_stock,
// computed, never stored; lock_stock is reconciled against the locked lines
// of unpaid orders (ReconcileLocks).

// ErrLockDrift: a release or a deduction found less locked than the order
// holds. It never happens while every lock goes through here; the
// transaction is rolled back and the difference left for reconciliation.
var ErrLockDrift = errs.New(errs.Conflict, "lock_stock is below what the order holds")

// Deduct books the payment of movements (change type 2, in ascending SKU
// order, each with its ledger row). fromLock: the units were locked at
// order, and move from lock_stock to sold. Otherwise the lock was released
// before the money came (a payment after the timeout close): the units are
// taken again only while available, and the first SKU short of them is
// returned as *Short with nothing of the transaction to commit.
func Deduct(ctx context.Context, tx *ent.Tx, moves []Movement, fromLock bool) error {
	moves = slices.SortedFunc(slices.Values(moves), func(a, b Movement) int { return cmp.Compare(a.ItemID, b.ItemID) })
	if err := lockGoods(ctx, tx, goodsOf(moves)...); err != nil {
		return err
	}
	for i := range moves {
		m := &moves[i]
		n := -m.Num
		q := "UPDATE sku SET stock = stock - ?, lock_stock = lock_stock - ?, stock_version = stock_version + 1 WHERE id = ? AND lock_stock >= ? AND stock >= ?"
		args := []any{n, n, m.ItemID, n, n}
		if !fromLock {
			q = "UPDATE sku SET stock = stock - ?, stock_version = stock_version + 1 WHERE id = ? AND stock - lock_stock >= ?"
			args = []any{n, m.ItemID, n}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("deducting SKU %d at payment: %w", m.ItemID, err)
		}
		if moved, err := res.RowsAffected(); err != nil {
			return err
		} else if moved == 0 && fromLock {
			return fmt.Errorf("%w: SKU %d, deducting %d at payment", ErrLockDrift, m.ItemID, n)
		} else if moved == 0 {
			return &Short{Sale{Movement: *m}}
		}
		if err := bookMoved(ctx, tx, m); err != nil {
			return err
		}
	}
	if !fromLock {
		// Taken from available stock again: it may have been the last. After
		// every SKU row: the lock order goods → SKU rows → listing rows.
		return listing.Emptied(ctx, tx, goodsOf(moves)...)
	}
	return nil
}

// Release gives back the lock of a closed order's lock-mode lines (in
// ascending SKU order). The caller releases each line once (its own CAS on
// the line); stock did not move, so nothing is booked.
func Release(ctx context.Context, tx *ent.Tx, lines []RestoreLine) error {
	_, err := restoreAndRelease(ctx, tx, 0, "", []Closing{{Release: lines}})
	return err
}

// releaseOne gives back one line's lock (see Release); the caller holds the
// goods lock and writes the listing.
func releaseOne(ctx context.Context, tx *ent.Tx, l RestoreLine) error {
	res, err := tx.ExecContext(ctx, "UPDATE sku SET lock_stock = lock_stock - ?, stock_version = stock_version + 1 WHERE id = ? AND lock_stock >= ?", l.Num, l.ItemID, l.Num)
	if err != nil {
		return fmt.Errorf("releasing the lock on SKU %d: %w", l.ItemID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return fmt.Errorf("%w: SKU %d, releasing %d", ErrLockDrift, l.ItemID, l.Num)
	}
	return nil
}
