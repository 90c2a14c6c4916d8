package resolvers

import (
	"strconv"

	"storefront/graph"
	"storefront/internal/inventory"
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
		// A generated type: its ID fields take ID's first model, the string.
		out[i] = &graph.StockDiff{ItemID: strconv.FormatInt(d.ItemID, 10), GoodsID: strconv.FormatInt(d.GoodsID, 10), Stock: d.Stock, LedgerSum: d.LedgerSum, Diff: d.Diff,
			LockedStock: d.LockedStock, LockedByOrders: d.LockedByOrders, LockDiff: d.LockDiff}
	}
	return out
}
