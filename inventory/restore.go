package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/listing"
	"storefront/store"
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
	lines = slices.SortedFunc(slices.Values(lines), func(a, b RestoreLine) int { return cmp.Compare(a.ItemID, b.ItemID) })
	restored := 0
	for _, l := range lines {
		if l.Num <= 0 {
			continue
		}
		m := Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Num, Type: t, BizType: bizType, BizSn: bizSn}
		rowID, err := store.InsertID(ctx, tx, store.NewInsert(stocklog.Table).Row(func(v store.Values) { m.write(v, "0", "0") }))
		if store.IsDuplicate(err) {
			continue // already restored for this document: never add the stock twice
		}
		if err != nil {
			return restored, fmt.Errorf("booking restore of SKU %d: %w", l.ItemID, err)
		}
		if _, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + ?, version = version + 1 WHERE id = ?", l.Num, l.ItemID); err != nil {
			return restored, fmt.Errorf("restoring SKU %d: %w", l.ItemID, err)
		}
		if _, err := tx.ExecContext(ctx,
			"UPDATE stock_log SET after_stock = (SELECT stock FROM sku WHERE id = ?), before_stock = (SELECT stock FROM sku WHERE id = ?) - ? WHERE id = ?",
			l.ItemID, l.ItemID, l.Num, rowID); err != nil {
			return restored, fmt.Errorf("filling restore of SKU %d: %w", l.ItemID, err)
		}
		restored++
	}
	return restored, listing.Restocked(ctx, tx, itemsOf(lines)...)
}
