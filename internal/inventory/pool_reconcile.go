package inventory

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// PoolDiff is one pool's accounts (ReconcilePools). A pool balances when
// its stock is the sum of its ledger rows (LedgerSum); when what moved out
// of main stock for it (MovedOut, change type 7 on main) minus what came
// back (MovedBack: change type 8 on main, under the pool's key at its return
// and under an order's key for a lock released after it, and restores to
// main stock of its orders after the return, under the order's key or an
// after-sale's) is its stock plus what left its stock for orders and did
// not come back (SoldOpen: units of its deduct-mode lines, and of its
// lock-mode lines DEDUCTED, in orders not closed — shipped, completed and
// refunded ones included: a buyer may keep what was refunded — less the
// refund restores of those lines, under the order's key or an
// after-sale's; a LOCKED line's units are still in its stock); and when its
// lock_stock (LockedStock) is the units of its LOCKED lines in UNPAID
// orders (LockedByOrders), within 0..stock. Summed over a SKU's pools the
// second is the SKU's own locked account.
type PoolDiff struct {
	PoolID, ItemID                int64
	Stock, LedgerSum              int64
	MovedOut, MovedBack, SoldOpen int64
	LockedStock, LockedByOrders   int64
}

// Balanced reports whether every account of the pool holds.
func (d PoolDiff) Balanced() bool {
	return d.Stock == d.LedgerSum && d.MovedOut-d.MovedBack == d.Stock+d.SoldOpen && !d.LockDrift()
}

// LockDrift reports whether the pool's lock does not add up.
func (d PoolDiff) LockDrift() bool {
	return d.LockedStock != d.LockedByOrders || d.LockedStock < 0 || d.LockedStock > d.Stock
}

// ReconcilePools lists every pool's accounts (all when all, otherwise only
// the pools that do not balance). One read-only transaction reads every
// side, so an order committing meanwhile cannot show as a difference on
// MySQL (a repeatable-read snapshot) nor on SQLite (one writer at a time).
func (s *Service) ReconcilePools(ctx context.Context, all bool) ([]PoolDiff, error) {
	tx, err := s.db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return nil, store.Classify(err)
	}
	defer tx.Rollback()
	// back: every ledger row that came back for a pool's order line, under
	// the order's key (a close's restore or release, a refund's restore) or
	// an after-sale's (its refund restore), to the pool or to main stock.
	rows, err := tx.QueryContext(ctx, `
WITH back (line_pool, into_pool, change_type, change_num) AS (
  SELECT ol.pool_id, l.pool_id, l.change_type, l.change_num FROM stock_log l JOIN orders o ON o.order_sn = l.biz_sn
    JOIN order_line ol ON ol.order_id = o.id AND ol.item_id = l.item_id
    WHERE l.biz_type = ? AND l.change_type IN (?, ?, ?) AND ol.pool_id <> 0
  UNION ALL
  SELECT ol.pool_id, l.pool_id, l.change_type, l.change_num FROM stock_log l JOIN after_sale a ON a.after_sale_sn = l.biz_sn
    JOIN order_line ol ON ol.order_id = a.order_id AND ol.item_id = l.item_id
    WHERE l.biz_type = ? AND l.change_type = ? AND ol.pool_id <> 0
)
SELECT p.id, p.item_id, p.stock, p.lock_stock,
  COALESCE((SELECT SUM(l.change_num) FROM stock_log l WHERE l.pool_id = p.id), 0),
  COALESCE((SELECT -SUM(l.change_num) FROM stock_log l WHERE l.pool_id = 0 AND l.item_id = p.item_id AND l.change_type = ? AND l.biz_type = ? AND l.biz_sn = CAST(p.id AS CHAR)), 0),
  COALESCE((SELECT SUM(l.change_num) FROM stock_log l WHERE l.pool_id = 0 AND l.item_id = p.item_id AND l.change_type = ? AND l.biz_type = ? AND l.biz_sn = CAST(p.id AS CHAR)), 0)
  + COALESCE((SELECT SUM(b.change_num) FROM back b WHERE b.line_pool = p.id AND b.into_pool = 0), 0),
  COALESCE((SELECT SUM(ol.quantity) FROM order_line ol JOIN orders o ON o.id = ol.order_id
            WHERE ol.pool_id = p.id AND o.status <> ? AND (ol.stock_mode <> ? OR ol.lock_state = ?)), 0)
  - COALESCE((SELECT SUM(b.change_num) FROM back b WHERE b.line_pool = p.id AND b.change_type = ?), 0),
  COALESCE((SELECT SUM(ol.quantity) FROM order_line ol JOIN orders o ON o.id = ol.order_id
            WHERE ol.pool_id = p.id AND o.status = ? AND ol.lock_state = ?), 0)
FROM stock_pool p ORDER BY p.id`,
		BizOrder, int(CloseRestore), int(RefundRestore), int(FromPool),
		BizAfterSale, int(RefundRestore),
		int(ToPool), BizPool, int(FromPool), BizPool,
		string(enums.OrderClosed), string(enums.LockAtOrder), string(enums.LockDeducted), int(RefundRestore),
		string(enums.OrderUnpaid), string(enums.LockHeld))
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reconciling pools: %w", err))
	}
	defer rows.Close()
	var out []PoolDiff
	for rows.Next() {
		var d PoolDiff
		if err := rows.Scan(&d.PoolID, &d.ItemID, &d.Stock, &d.LockedStock, &d.LedgerSum, &d.MovedOut, &d.MovedBack, &d.SoldOpen, &d.LockedByOrders); err != nil {
			return nil, err
		}
		if all || !d.Balanced() {
			out = append(out, d)
		}
	}
	return out, store.Classify(rows.Err())
}
