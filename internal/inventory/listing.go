package inventory

import (
	"context"

	"storefront/ent"
	"storefront/internal/listing"
)

// What the listing (package listing) keeps per goods moves with stock: a
// goods is in stock while some enabled SKU has stock - lock_stock > 0, and
// its sales are the sum of its SKUs' volume. Every movement here tells
// listing in its own transaction, after its SKU rows are locked. A sale
// flips "in stock" only when it leaves its SKU with nothing, and the plain
// path learns that without a statement more: its CAS first asks to leave at
// least one unit (leaving), and only when that fails asks for the exact
// remainder, whose success means the SKU was emptied (emptiedBy).

// leaving is the floors of a take's CAS for n units, in the order tried:
// more than n available, then exactly n.
func leaving(n int64) [2]int64 { return [2]int64{n + 1, n} }

// emptiedBy adds goods to emptied when the CAS that held was the one at
// floor n: the SKU has nothing left.
func emptiedBy(emptied []int64, floor, n, goods int64) []int64 {
	if floor == n {
		return append(emptied, goods)
	}
	return emptied
}

// unitsByGoods sums lines' units per goods.
func unitsByGoods(lines []RestoreLine) map[int64]int64 {
	units := make(map[int64]int64, len(lines))
	for _, l := range lines {
		units[l.GoodsID] += l.Num
	}
	return units
}

// itemsOf is the SKUs of lines, for listing.Restocked.
func itemsOf(lines []RestoreLine) []int64 {
	return idsOf(lines, func(l RestoreLine) int64 { return l.ItemID })
}

// moved reads a SKU row an admin movement (adjustment, stocktake, a move to
// a pool) has just changed by delta and holds locked, and tells the listing.
func moved(ctx context.Context, tx *ent.Tx, id, delta int64) (*ent.Sku, error) {
	row, err := tx.Sku.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if delta < 0 {
		return row, listing.Emptied(ctx, tx, row.GoodsID)
	}
	return row, listing.Restocked(ctx, tx, []int64{row.GoodsID}, id)
}
