package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// RestoreLine is stock to give back to one SKU.
type RestoreLine struct {
	ItemID, GoodsID, Num int64
	PoolID               int64 // the pool a pool line was sold from (RestorePool); 0 for main stock
}

// Restore gives stock back for one business document (an order's cancel or
// close with CloseRestore, a refund with RefundRestore) inside the caller's
// transaction, and returns how many lines moved stock.
//
// Per line, in ascending SKU id (the lock order of checkout, so restores and
// deductions cannot deadlock each other): the ledger row goes in FIRST, so
// uk_biz rejects a repeated restore of the same document before any stock
// moves and that line becomes a no-op; then the stock is added; then the
// row's before/after are filled from the balance this transaction now holds
// locked. All three commit or roll back together.
//
// The caller must win its own state CAS first (seed 003, 5.6): the state
// machine makes the restore happen once in business terms, uk_biz makes it
// booked once in the ledger.
func Restore(ctx context.Context, tx *ent.Tx, t ChangeType, bizType, bizSn string, lines []RestoreLine) (int, error) {
	return restoreAndRelease(ctx, tx, t, bizType, []Closing{{BizSn: bizSn, Restore: lines}})
}

// RestoreAndRelease closes a document whose lines partly restore stock
// (Restore: deduct-mode lines, refunds) and partly release a lock (Release:
// lock-mode lines of an unpaid order), in one ascending pass over the SKU
// rows of both, and writes the listing once at the end: the lock order goods
// → SKU rows → listing rows holds for the whole transaction. (A Restore per
// line would write the listing between two SKU rows, and two cancels of
// orders of the same two SKUs would deadlock on MariaDB.)
func RestoreAndRelease(ctx context.Context, tx *ent.Tx, t ChangeType, bizType, bizSn string, restore, release []RestoreLine) (int, error) {
	return restoreAndRelease(ctx, tx, t, bizType, []Closing{{BizSn: bizSn, Restore: restore, Release: release}})
}

func restoreAndRelease(ctx context.Context, tx *ent.Tx, t ChangeType, bizType string, docs []Closing) (int, error) {
	type step struct {
		l       RestoreLine
		bizSn   string
		release bool
	}
	var steps []step
	for _, d := range docs {
		for _, l := range d.Restore {
			steps = append(steps, step{l, d.BizSn, false})
		}
		for _, l := range d.Release {
			steps = append(steps, step{l, d.BizSn, true})
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int { return cmp.Compare(a.l.ItemID, b.l.ItemID) })
	all := make([]RestoreLine, len(steps))
	for i, st := range steps {
		all[i] = st.l
	}
	if err := lockGoods(ctx, tx, goodsOfLines(all)...); err != nil {
		return 0, err
	}
	restored := 0
	for _, st := range steps {
		if st.release {
			if err := releaseOne(ctx, tx, st.l); err != nil {
				return restored, err
			}
			continue
		}
		ok, err := restoreOne(ctx, tx, t, bizType, st.bizSn, st.l)
		if err != nil {
			return restored, err
		}
		if ok {
			restored++
		}
	}
	return restored, listing.Restocked(ctx, tx, goodsOfLines(all), itemsOf(all)...)
}

// restoreOne gives one line's stock back (see Restore) and reports whether
// it moved stock; the caller holds the goods lock and writes the listing.
func restoreOne(ctx context.Context, tx *ent.Tx, t ChangeType, bizType, bizSn string, l RestoreLine) (bool, error) {
	if l.Num <= 0 {
		return false, nil
	}
	m := Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Num, Type: t, BizType: bizType, BizSn: bizSn}
	rowID, booked, err := store.InsertNew(ctx, tx, store.NewInsert(stocklog.Table).Row(func(v store.Values) { m.write(v, "0", "0") }))
	if err != nil {
		return false, fmt.Errorf("booking restore of SKU %d: %w", l.ItemID, err)
	}
	if !booked {
		return false, nil // already restored for this document: never add the stock twice
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + ?, stock_version = stock_version + 1 WHERE id = ?", l.Num, l.ItemID); err != nil {
		return false, fmt.Errorf("restoring SKU %d: %w", l.ItemID, err)
	}
	if _, err := tx.ExecContext(ctx,
		"UPDATE stock_log SET after_stock = (SELECT stock FROM sku WHERE id = ?), before_stock = (SELECT stock FROM sku WHERE id = ?) - ? WHERE id = ?",
		l.ItemID, l.ItemID, l.Num, rowID); err != nil {
		return false, fmt.Errorf("filling restore of SKU %d: %w", l.ItemID, err)
	}
	return true, nil
}
