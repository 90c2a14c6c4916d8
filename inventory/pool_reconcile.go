package inventory

import (
	"context"
	"fmt"

	"storefront/enums"
	"storefront/store"
)

// PoolDiff is one pool's accounts (ReconcilePools). A pool balances when
// its stock is the sum of its ledger rows (LedgerSum), and when what moved
// out of main stock for it (MovedOut, change type 7 on main) minus what
// came back (MovedBack: change type 8 on main, and restores to main stock
// of its orders after it went back) is its stock plus what it sold and did
// not restore (SoldOpen: units of its lines in orders neither closed nor
// refunded). Summed over a SKU's pools this is issue 18's per-SKU account.
type PoolDiff struct {
	PoolID, ItemID                int64
	Stock, LedgerSum              int64
	MovedOut, MovedBack, SoldOpen int64
}

// Balanced reports whether both accounts of the pool hold.
func (d PoolDiff) Balanced() bool {
	return d.Stock == d.LedgerSum && d.MovedOut-d.MovedBack == d.Stock+d.SoldOpen
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
	rows, err := tx.QueryContext(ctx, `
SELECT p.id, p.item_id, p.stock,
  COALESCE((SELECT SUM(l.change_num) FROM stock_log l WHERE l.pool_id = p.id), 0),
  COALESCE((SELECT -SUM(l.change_num) FROM stock_log l WHERE l.pool_id = 0 AND l.item_id = p.item_id AND l.change_type = ? AND l.biz_type = ? AND l.biz_sn = CAST(p.id AS CHAR)), 0),
  COALESCE((SELECT SUM(l.change_num) FROM stock_log l WHERE l.pool_id = 0 AND l.item_id = p.item_id AND l.change_type = ? AND l.biz_type = ? AND l.biz_sn = CAST(p.id AS CHAR)), 0)
  + COALESCE((SELECT SUM(l.change_num) FROM stock_log l JOIN orders o ON o.order_sn = l.biz_sn
               JOIN order_line ol ON ol.order_id = o.id AND ol.item_id = l.item_id
               WHERE l.pool_id = 0 AND l.biz_type = ? AND l.change_type IN (?, ?) AND ol.pool_id = p.id), 0),
  COALESCE((SELECT SUM(ol.quantity) FROM order_line ol JOIN orders o ON o.id = ol.order_id
            WHERE ol.pool_id = p.id AND o.status IN (?, ?)), 0)
FROM stock_pool p ORDER BY p.id`,
		int(ToPool), BizPool, int(FromPool), BizPool, BizOrder, int(CloseRestore), int(RefundRestore),
		string(enums.OrderUnpaid), string(enums.OrderPaid))
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reconciling pools: %w", err))
	}
	defer rows.Close()
	var out []PoolDiff
	for rows.Next() {
		var d PoolDiff
		if err := rows.Scan(&d.PoolID, &d.ItemID, &d.Stock, &d.LedgerSum, &d.MovedOut, &d.MovedBack, &d.SoldOpen); err != nil {
			return nil, err
		}
		if all || !d.Balanced() {
			out = append(out, d)
		}
	}
	return out, store.Classify(rows.Err())
}
