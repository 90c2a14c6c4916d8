package inventory

import (
	"context"
	"fmt"

	"storefront/store"
)

// StockDiff is a SKU whose stock is not the sum of its ledger rows.
type StockDiff struct {
	ItemID, GoodsID, Stock, LedgerSum, Diff int64
}

// Reconcile lists SKUs whose stock differs from their ledger sum (seed 003,
// 7.4). One statement reads both sides, so it sees one consistent snapshot
// and an order committing meanwhile cannot show up as a false difference.
// Nothing is corrected here: a person books a stocktake.
func (s *Service) Reconcile(ctx context.Context, limit int) ([]StockDiff, error) {
	if limit <= 0 || limit > 10000 {
		limit = 100
	}
	rows, err := s.db.SQL.QueryContext(ctx, `
SELECT i.id, i.goods_id, i.stock, COALESCE(SUM(l.change_num), 0)
FROM sku i LEFT JOIN stock_log l ON l.item_id = i.id
GROUP BY i.id, i.goods_id, i.stock
HAVING i.stock <> COALESCE(SUM(l.change_num), 0)
ORDER BY i.id
LIMIT ?`, limit)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reconciling stock: %w", err))
	}
	defer rows.Close()
	var out []StockDiff
	for rows.Next() {
		var d StockDiff
		if err := rows.Scan(&d.ItemID, &d.GoodsID, &d.Stock, &d.LedgerSum); err != nil {
			return nil, err
		}
		d.Diff = d.Stock - d.LedgerSum
		out = append(out, d)
	}
	return out, store.Classify(rows.Err())
}

// NegativeSKUs counts SKUs with stock below zero: the seed's
// stock_negative_total, the most important number in the shop.
func (s *Service) NegativeSKUs(ctx context.Context) (int64, error) {
	var n int64
	err := s.db.SQL.QueryRowContext(ctx, "SELECT COUNT(*) FROM sku WHERE stock < 0").Scan(&n)
	return n, store.Classify(err)
}
