// Package listing is the one writer of goods_listing: per goods, the values a
// listing page filters and sorts by (lowest enabled SKU price, units sold,
// whether anything is in stock, the name and search keys), kept in the same
// transaction as whatever changes them, one row per scope the goods can be
// listed under (0 for every goods, and each category it is in or under).
// Every value is recomputable from goods, sku and category rows (the truth):
// Refresh rewrites a goods' rows from it, Reconcile compares. Callers are
// catalog (goods and SKU edits), inventory (stock movements, sold volume) and
// the listing query (Query). docs/listing.md explains the design.
package listing

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/goodslisting"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// NoPrice is the min_price of a goods with no enabled SKU: it sorts after
// every real price ascending, and a price filter never matches it.
const NoPrice = math.MaxInt64

// All is the scope of every goods; any other scope is a category id.
const All = 0

// MaxDepth is how many levels the category tree may have, so how many
// category scopes a goods has at most.
const MaxDepth = 5

// sep joins name and code in search_key: a search term (which may not hold
// control characters) never spans both.
const sep = "\x1f"

// The truth of the kept values, as SQL over the sku rows of the goods whose
// id is goods (a number this package formatted, or a column): the one
// definition that Refresh writes, the stock flips re-evaluate and Reconcile
// compares with. The ...In forms read the table as from names it (skuByGoods).
func minPriceOf(goods string) string { return minPriceIn("sku", goods) }
func salesOf(goods string) string    { return salesIn("sku", goods) }
func inStockOf(goods string) string  { return inStockIn("sku", goods) }

func minPriceIn(from, goods string) string {
	return "COALESCE((SELECT MIN(sell_price) FROM " + from + " WHERE sku.goods_id = " + goods + " AND sku.status = '" +
		string(enums.SkuEnabled) + "'), " + strconv.FormatInt(NoPrice, 10) + ")"
}

func salesIn(from, goods string) string {
	return "(SELECT COALESCE(SUM(volume), 0) FROM " + from + " WHERE sku.goods_id = " + goods + ")"
}

func inStockIn(from, goods string) string {
	return "EXISTS (SELECT 1 FROM " + from + " WHERE sku.goods_id = " + goods + " AND sku.status = '" +
		string(enums.SkuEnabled) + "' AND sku.stock - sku.lock_stock > 0)"
}

// skuByGoods is the sku table for a rewrite's reads of one goods' SKUs,
// which on MySQL lock what they read: through the (goods_id, status)
// index, so that only that goods' rows are locked. MariaDB reads a goods
// that has most of the table's SKUs (the demo's 500-SKU shoe) by a scan of
// the whole table otherwise, and locked the SKU rows of every other goods
// after the listing rows: edits of it deadlocked with sales and restores of
// the others.
func skuByGoods(ctx context.Context) string { return store.Indexed(ctx, "sku", "sku_goods_id_status") }

// keys are the name and search keys of a goods. Lowercased here, not by the
// database: SQLite's LOWER knows ASCII only, and both backends must agree.
func keys(name, code string) (nameKey, searchKey string) {
	nameKey = clip(strings.ToLower(name))
	return nameKey, clip(nameKey + sep + strings.ToLower(code))
}

// clip keeps a key within its 255-character column, on a rune boundary.
func clip(s string) string {
	if r := []rune(s); len(r) > 255 {
		return string(r[:255])
	}
	return s
}

// Refresh rewrites the listing rows of the goods from the truth, inside the
// caller's transaction: every catalog edit of a goods (content, status,
// category, SKU prices and statuses, specs) calls it once it has written; a
// creation calls Add. The sku aggregates
// are read by the INSERT … SELECT itself, which on MariaDB locks what it
// reads, so a concurrent stock movement is seen, never a stale snapshot of
// it. Many goods take a few statements per refreshChunk of them.
func Refresh(ctx context.Context, tx *ent.Tx, ids ...int64) error {
	return write(ctx, tx, ids, true)
}

// Add writes the first listing rows of goods created in the caller's
// transaction, which has none yet. Refresh's DELETE by goods_id would find
// nothing for them, but under REPEATABLE READ it locks the end of the
// goods_id index, and two createGoods that each locked it deadlocked on
// their inserts there (MariaDB). An edit must Refresh: its DELETE reads the
// latest rows, where a plain read of the snapshot missed rows a concurrent
// edit had just committed and the insert then met their ids.
func Add(ctx context.Context, tx *ent.Tx, ids ...int64) error {
	return write(ctx, tx, ids, false)
}

func write(ctx context.Context, tx *ent.Tx, ids []int64, replace bool) error {
	if len(ids) == 0 {
		return nil
	}
	parent, err := parents(ctx, tx)
	if err != nil {
		return fmt.Errorf("refreshing the listing: %w", err)
	}
	for start := 0; start < len(ids); start += refreshChunk {
		if err := refresh(ctx, tx, ids[start:min(start+refreshChunk, len(ids))], parent, replace); err != nil {
			return fmt.Errorf("refreshing the listing of goods %v…: %w", ids[start], err)
		}
	}
	return nil
}

// refreshChunk is how many goods one read of goods rows and one DELETE take.
const refreshChunk = 200

func refresh(ctx context.Context, tx *ent.Tx, ids []int64, parent map[int64]*int64, replace bool) error {
	// The goods rows exclusively, before the listing rows and the SKU rows
	// the INSERT … SELECT reads: the lock order goods → SKU → listing
	// (internal/inventory/goods_lock.go). Every stock movement holds its goods
	// shared from before it locks a SKU row, so a rewrite never holds
	// listing rows while a movement of the same goods holds a SKU row it
	// reads (they deadlock on MariaDB). A catalog edit holds its
	// goods already; a category move takes them here.
	if err := store.Lock(ctx, tx, store.GoodsLock, store.Exclusive, slices.Sorted(slices.Values(ids))...); err != nil {
		return err
	}
	rows, err := tx.Goods.Query().Where(goods.IDIn(ids...)).Modify(store.UpdateLock).All(ctx)
	if err != nil {
		return err
	}
	// An edit that leaves the goods' scopes as they are (a name, a price, a
	// status: every edit but a category move) rewrites its rows in place.
	// Deleting them and inserting them again made two edits of different
	// goods deadlock on MariaDB: an insert checks the unique (scope,
	// goods_id) key by locking the delete-marked record of the same key and
	// the record after it, another goods' row, which another rewrite holds
	// (a deadlock of admins editing goods side by side).
	var held map[int64][]heldRow
	if replace {
		if held, err = heldRows(ctx, tx, ids); err != nil {
			return err
		}
	}
	var (
		rewrite  []int64 // goods whose rows are deleted and written again
		rowsArgs [][]any // their rows, as a derived table the INSERT … SELECT reads with the sku aggregates
	)
	seen := make(map[int64]bool, len(rows))
	for _, g := range rows {
		seen[g.ID] = true
		scopes, err := scopesOf(g.CategoryID, parent)
		if err != nil {
			return err
		}
		nameKey, searchKey := keys(g.Name, g.Code)
		if replace && sameRows(held[g.ID], g.ID, scopes) {
			if err := rewriteInPlace(ctx, tx, g, nameKey, searchKey); err != nil {
				return err
			}
			continue
		}
		rewrite = append(rewrite, g.ID)
		for i, sc := range scopes {
			rowsArgs = append(rowsArgs, []any{g.ID, sc, i, string(g.Status), nameKey, searchKey, g.CreatedAt})
		}
	}
	for _, id := range ids {
		if !seen[id] {
			rewrite = append(rewrite, id) // no such goods: no rows either
		}
	}
	if replace && len(rewrite) > 0 {
		if _, err := tx.GoodsListing.Delete().Where(goodslisting.GoodsIDIn(rewrite...)).Exec(ctx); err != nil {
			return err
		}
	}
	for start := 0; start < len(rowsArgs); start += maxDerivedRows {
		from := &strings.Builder{}
		var args []any
		for i, r := range rowsArgs[start:min(start+maxDerivedRows, len(rowsArgs))] {
			if i == 0 {
				from.WriteString("(SELECT ? AS g, ? AS scope, ? AS i, ? AS st, ? AS nk, ? AS sk, ? AS ca")
			} else {
				from.WriteString(" UNION ALL SELECT ?, ?, ?, ?, ?, ?, ?")
			}
			args = append(args, r...)
		}
		from.WriteString(") s")
		q, qargs := store.NewInsert(goodslisting.Table).Row(listingRow(skuByGoods(ctx))).SelectSQL(from.String(), args...)
		if _, err := tx.ExecContext(ctx, q, qargs...); err != nil {
			return err
		}
	}
	return nil
}

// heldRow is a listing row of a goods as it is now.
type heldRow struct {
	ID    int64 `sql:"id"`
	Goods int64 `sql:"goods_id"`
	Scope int64 `sql:"scope"`
}

// heldRows reads the listing rows of the goods ids by a locking read (the
// latest rows, whatever the transaction's snapshot), in id order. The
// caller holds the goods exclusively, so no stock movement of them is
// writing these rows.
func heldRows(ctx context.Context, tx *ent.Tx, ids []int64) (map[int64][]heldRow, error) {
	var rows []heldRow
	err := tx.GoodsListing.Query().Where(goodslisting.GoodsIDIn(ids...)).Order(goodslisting.ByID()).Modify(func(s *entsql.Selector) {
		s.Select(s.C(goodslisting.FieldID), s.C(goodslisting.FieldGoodsID), s.C(goodslisting.FieldScope))
		store.UpdateLock(s)
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	held := make(map[int64][]heldRow, len(ids))
	for _, r := range rows {
		held[r.Goods] = append(held[r.Goods], r)
	}
	return held, nil
}

// sameRows reports whether the rows held are the ones goods g would have
// in scopes (listingRow's ids and scopes).
func sameRows(held []heldRow, g int64, scopes []int64) bool {
	if len(held) != len(scopes) {
		return false
	}
	for i, sc := range scopes {
		if held[i].ID != g*8+int64(i) || held[i].Scope != sc {
			return false
		}
	}
	return true
}

// rewriteInPlace sets every listing row of goods g to its values from the
// truth (listingRow's, but for the id and scope, which stay).
func rewriteInPlace(ctx context.Context, tx *ent.Tx, g *ent.Goods, nameKey, searchKey string) error {
	id, sku := strconv.FormatInt(g.ID, 10), skuByGoods(ctx)
	_, err := tx.ExecContext(ctx, "UPDATE goods_listing SET status = ?, name_key = ?, search_key = ?, min_price = "+minPriceIn(sku, id)+
		", sales = "+salesIn(sku, id)+", in_stock = "+inStockIn(sku, id)+", created_at = ? WHERE goods_id = ?",
		string(g.Status), nameKey, searchKey, g.CreatedAt, g.ID)
	return err
}

// maxDerivedRows keeps a derived table under SQLite's 500 terms of one
// compound SELECT.
const maxDerivedRows = 400

// listingRow is the one definition of a listing row, read from the derived
// table s (a goods' id g, its scope and that scope's place i on its path,
// status, keys and creation time) and the truth's aggregates. The id is
// the goods' own times 8 plus the place: never from an auto-increment
// counter, which MariaDB fails to read for an INSERT … SELECT under a
// stepped auto_increment_increment (Galera), and a rewrite keeps the ids.
// The aggregates read the sku table as sku names it (skuByGoods).
func listingRow(sku string) func(v store.Values) {
	return func(v store.Values) {
		v.Raw(goodslisting.FieldID, "s.g * 8 + s.i")
		v.Raw(goodslisting.FieldScope, "s.scope")
		v.Raw(goodslisting.FieldGoodsID, "s.g")
		v.Raw(goodslisting.FieldStatus, "s.st")
		v.Raw(goodslisting.FieldNameKey, "s.nk")
		v.Raw(goodslisting.FieldSearchKey, "s.sk")
		v.Raw(goodslisting.FieldMinPrice, minPriceIn(sku, "s.g"))
		v.Raw(goodslisting.FieldSales, salesIn(sku, "s.g"))
		v.Raw(goodslisting.FieldInStock, inStockIn(sku, "s.g"))
		v.Raw(goodslisting.FieldCreatedAt, "s.ca")
	}
}

// scopesOf is the scopes a goods in category cat is listed under: All,
// then the category and each of its ancestors (at most MaxDepth). The walk
// is bounded, so a loop in the tree (written by hand) ends it as an error.
func scopesOf(cat *int64, parent map[int64]*int64) ([]int64, error) {
	scopes := []int64{All}
	for k := cat; k != nil; k = parent[*k] {
		if slices.Contains(scopes[1:], *k) {
			return nil, fmt.Errorf("category %d: its path %v comes back to category %d, a loop", *cat, scopes[1:], *k)
		}
		if len(scopes) > MaxDepth {
			return nil, fmt.Errorf("category %d is more than %d levels deep", *cat, MaxDepth)
		}
		scopes = append(scopes, *k)
	}
	return scopes, nil
}
