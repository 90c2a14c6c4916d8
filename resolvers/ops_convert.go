package resolvers

import (
	"storefront/graph"
	"storefront/inventory"
)

// reconcileLimit keeps an absurd limit from reaching the database as one:
// inventory.Reconcile answers at most 10000 rows.
func reconcileLimit(limit *int64) int {
	switch n := deref(limit); {
	case n <= 0:
		return 100
	case n > 10000:
		return 10000
	default:
		return int(n)
	}
}

func stockDiffs(ds []inventory.StockDiff) []*graph.StockDiff {
	out := make([]*graph.StockDiff, len(ds))
	for i, d := range ds {
		out[i] = &graph.StockDiff{ItemID: d.ItemID, GoodsID: d.GoodsID, Stock: d.Stock, LedgerSum: d.LedgerSum, Diff: d.Diff,
			LockedStock: d.LockedStock, LockedByOrders: d.LockedByOrders, LockDiff: d.LockDiff}
	}
	return out
}
