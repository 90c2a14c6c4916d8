package inventory

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// StockDiff is a SKU whose stock is not the sum of its ledger rows (Diff),
// or whose lock_stock is not the units of the locked lines of unpaid
// lock-at-order orders (LockDiff), or is negative or above stock.
type StockDiff struct {
	ItemID, GoodsID, Stock, LedgerSum, Diff int64
	LockedStock, LockedByOrders, LockDiff   int64
}

// Reconcile lists SKUs whose stock differs from their ledger sum (seed 003,
// 7.4), and SKUs whose lock_stock is not the units of the locked lines of
// unpaid lock-at-order orders, or is negative or above stock (lines from a
// stock pool lock the pool's row: ReconcilePools counts them). One statement
// reads every side, so it sees one consistent snapshot and an order
// committing meanwhile cannot show up as a false difference. Nothing is
// corrected here: a person books a stocktake or looks into the lock.
func (s *Service) Reconcile(ctx context.Context, limit int) ([]StockDiff, error) {
	if limit <= 0 || limit > 10000 {
		limit = 100
	}
	rows, err := s.db.SQL.QueryContext(ctx, `
SELECT i.id, i.goods_id, i.stock, COALESCE(l.total, 0), i.lock_stock, COALESCE(o.total, 0)
FROM sku i
LEFT JOIN (SELECT item_id, SUM(change_num) AS total FROM stock_log WHERE pool_id = 0 GROUP BY item_id) l ON l.item_id = i.id
LEFT JOIN (SELECT ol.item_id, SUM(ol.quantity) AS total FROM order_line ol JOIN orders od ON od.id = ol.order_id
           WHERE ol.lock_state = ? AND od.status = ? AND ol.pool_id = 0 GROUP BY ol.item_id) o ON o.item_id = i.id
WHERE i.stock <> COALESCE(l.total, 0) OR i.lock_stock <> COALESCE(o.total, 0) OR i.lock_stock < 0 OR i.lock_stock > i.stock
ORDER BY i.id
LIMIT ?`, string(enums.LockHeld), string(enums.OrderUnpaid), limit)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reconciling stock: %w", err))
	}
	defer rows.Close()
	var out []StockDiff
	for rows.Next() {
		var d StockDiff
		if err := rows.Scan(&d.ItemID, &d.GoodsID, &d.Stock, &d.LedgerSum, &d.LockedStock, &d.LockedByOrders); err != nil {
			return nil, err
		}
		d.Diff = d.Stock - d.LedgerSum
		d.LockDiff = d.LockedStock - d.LockedByOrders
		out = append(out, d)
	}
	return out, store.Classify(rows.Err())
}

// LockDrift reports whether d is a lock difference (as opposed to, or as
// well as, a ledger difference).
func (d StockDiff) LockDrift() bool {
	return d.LockDiff != 0 || d.LockedStock < 0 || d.LockedStock > d.Stock
}

// NegativeSKUs counts SKUs with stock below zero: the seed's
// stock_negative_total, the most important number in the shop.
func (s *Service) NegativeSKUs(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM sku WHERE stock < 0").Scan(&n)
	return n, store.Classify(err)
}
