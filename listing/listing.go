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
	"strconv"
	"strings"
	"time"

	"storefront/ent"
	"storefront/ent/category"
	"storefront/ent/goodslisting"
	"storefront/enums"
	"storefront/store"
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
// compares with.
func minPriceOf(goods string) string {
	return "COALESCE((SELECT MIN(sell_price) FROM sku WHERE sku.goods_id = " + goods + " AND sku.status = '" +
		string(enums.SkuEnabled) + "'), " + strconv.FormatInt(NoPrice, 10) + ")"
}

func salesOf(goods string) string {
	return "(SELECT COALESCE(SUM(volume), 0) FROM sku WHERE sku.goods_id = " + goods + ")"
}

func inStockOf(goods string) string {
	return "EXISTS (SELECT 1 FROM sku WHERE sku.goods_id = " + goods + " AND sku.status = '" +
		string(enums.SkuEnabled) + "' AND sku.stock - sku.lock_stock > 0)"
}

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
// caller's transaction: every catalog edit of a goods (creation, content,
// status, category, SKU prices and statuses, specs) calls it once it has
// written. A soft-deleted goods has no rows. The sku aggregates are read by
// the INSERT … SELECT itself, which on MariaDB locks what it reads, so a
// concurrent stock movement is seen, never a stale snapshot of it.
func Refresh(ctx context.Context, tx *ent.Tx, ids ...int64) error {
	for _, id := range ids {
		if err := refresh(ctx, tx, id); err != nil {
			return fmt.Errorf("refreshing the listing of goods %d: %w", id, err)
		}
	}
	return nil
}

func refresh(ctx context.Context, tx *ent.Tx, id int64) error {
	g, err := tx.Goods.Get(ctx, id)
	if err != nil {
		return err
	}
	if _, err := tx.GoodsListing.Delete().Where(goodslisting.GoodsID(id)).Exec(ctx); err != nil {
		return err
	}
	if g.DeleteTime != nil {
		return nil
	}
	scopes, err := Scopes(ctx, tx.Client(), g.CategoryID)
	if err != nil {
		return err
	}
	from := &strings.Builder{}
	from.WriteString("(")
	for i, sc := range scopes {
		if i > 0 {
			from.WriteString(" UNION ALL ")
		}
		from.WriteString("SELECT " + strconv.FormatInt(sc, 10) + " AS scope, " + strconv.Itoa(i) + " AS i")
	}
	from.WriteString(") scopes")
	q, args := store.NewInsert(goodslisting.Table).Row(func(v store.Values) {
		write(v, "scopes.scope", "scopes.i", g.ID, g.Status, g.Name, g.Code, g.CreatedAt)
	}).SelectSQL(from.String())
	_, err = tx.ExecContext(ctx, q, args...)
	return err
}

// write is the one definition of a listing row: scope and place (0 for All,
// 1 for the goods' own category, up to MaxDepth) are SQL expressions, the
// kept values are the truth's.
func write(v store.Values, scope, place string, id int64, status enums.GoodsStatus, name, code string, created time.Time) {
	nameKey, searchKey := keys(name, code)
	goods := strconv.FormatInt(id, 10)
	// The id is the goods' own, times 8, plus the scope's place on its
	// path: a row's id never comes from an auto-increment counter, which
	// MariaDB fails to read for an INSERT … SELECT under a stepped
	// auto_increment_increment (Galera), and a rewrite keeps the ids.
	v.Raw(goodslisting.FieldID, goods+" * 8 + "+place)
	v.Raw(goodslisting.FieldScope, scope)
	v.Int(goodslisting.FieldGoodsID, id)
	v.Str(goodslisting.FieldStatus, string(status))
	v.Str(goodslisting.FieldNameKey, nameKey)
	v.Str(goodslisting.FieldSearchKey, searchKey)
	v.Raw(goodslisting.FieldMinPrice, minPriceOf(goods))
	v.Raw(goodslisting.FieldSales, salesOf(goods))
	v.Raw(goodslisting.FieldInStock, inStockOf(goods))
	v.Time(goodslisting.FieldCreatedAt, created)
}

// Scopes are the scopes a goods in category cat is listed under: All, then
// the category and each of its ancestors (at most MaxDepth).
func Scopes(ctx context.Context, c *ent.Client, cat *int64) ([]int64, error) {
	scopes := []int64{All}
	for next := cat; next != nil; {
		if len(scopes) > MaxDepth {
			return nil, fmt.Errorf("category %d is more than %d levels deep", *cat, MaxDepth)
		}
		row, err := c.Category.Query().Where(category.ID(*next)).Only(ctx)
		if err != nil {
			return nil, fmt.Errorf("category %d: %w", *next, err)
		}
		scopes = append(scopes, row.ID)
		next = row.ParentID
	}
	return scopes, nil
}
