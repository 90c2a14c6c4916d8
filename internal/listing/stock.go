package listing

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"storefront/ent"
	"storefront/internal/vocab/enums"
)

// The stock flips. in_stock changes only when a SKU's available stock
// (stock - lock_stock) crosses zero, so the hot path asks for a flip only
// then: a sale that left its SKU with nothing (Emptied; in a group-commit
// batch MySQL.Emptied, Postgres.Emptied). Every other movement (restores,
// releases, admin adjustments, pools) calls Recheck, which re-evaluates the
// truth both ways. Each statement touches
// only the rows whose value really changes, through the (goods_id, in_stock)
// index, and must run after the caller's SKU rows are locked (the lock
// order: goods rows, SKU rows, then listing rows; internal/inventory/goods_lock.go).

// Emptied marks out of stock the goods (of SKUs a sale just emptied) that
// have no enabled SKU with available stock left.
func Emptied(ctx context.Context, tx *ent.Tx, goods ...int64) error {
	if len(goods) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "UPDATE goods_listing SET in_stock = FALSE WHERE goods_id IN ("+ids(goods)+
		") AND in_stock = TRUE AND NOT "+inStockOf("goods_listing.goods_id"))
	if err != nil {
		return fmt.Errorf("marking goods %v out of stock: %w", goods, err)
	}
	return nil
}

// Restocked marks in stock the goods (of SKUs items, whose stock a
// movement just raised: restores, releases, pool returns, adjustments up)
// that have one of those SKUs available now. Only those SKU rows, which the
// caller holds locked, are read: stock going up can only make a goods in
// stock, and no other transaction's rows are waited for while the listing
// rows are held (two restores of one goods' SKUs would otherwise deadlock).
// The listing rows are found by their goods' ids, so exactly they are
// locked, in ascending goods order: found through the SKUs (goods_id IN
// (SELECT goods_id FROM sku …)) MariaDB 10.11 runs the subquery for every
// listing row and locks every row of the table as it scans it, which
// deadlocked the timeout closer with placements and cancels of other goods
// (MariaDB error 1213). The
// SKUs are read by id ("goods_id + 0" keeps MariaDB off the (goods_id,
// status) index): a subquery of an UPDATE is a locking read there, and
// through that index it would lock the goods' other SKU rows after the
// listing rows.
func Restocked(ctx context.Context, tx *ent.Tx, goods []int64, items ...int64) error {
	if len(goods) == 0 || len(items) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, "UPDATE goods_listing SET in_stock = TRUE WHERE goods_id IN ("+ids(goods)+
		") AND in_stock = FALSE AND EXISTS (SELECT 1 FROM sku WHERE sku.id IN ("+ids(items)+
		") AND sku.goods_id + 0 = goods_listing.goods_id AND sku.status = '"+string(enums.SkuEnabled)+"' AND sku.stock - sku.lock_stock > 0)")
	if err != nil {
		return fmt.Errorf("marking the goods of SKUs %v in stock: %w", items, err)
	}
	return nil
}

// Sold adds units sold to the goods' sales (the payment that added them to
// sku.volume), in ascending goods order.
func Sold(ctx context.Context, tx *ent.Tx, units map[int64]int64) error {
	goods := make([]int64, 0, len(units))
	for g := range units {
		goods = append(goods, g)
	}
	slices.SortFunc(goods, cmp.Compare)
	for _, g := range goods {
		if _, err := tx.ExecContext(ctx, "UPDATE goods_listing SET sales = sales + ? WHERE goods_id = ?", units[g], g); err != nil {
			return fmt.Errorf("adding sales of goods %d: %w", g, err)
		}
	}
	return nil
}

// ids renders distinct ids, ascending, as an SQL list.
func ids(goods []int64) string {
	goods = slices.Compact(slices.Sorted(slices.Values(goods)))
	parts := make([]string, len(goods))
	for i, g := range goods {
		parts[i] = strconv.FormatInt(g, 10)
	}
	return strings.Join(parts, ", ")
}
