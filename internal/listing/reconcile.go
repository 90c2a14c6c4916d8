package listing

import (
	"context"
	"fmt"
	"math"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/goodslisting"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Diff is one listing row that is not what the truth gives: a missing row
// (Got ""), a row that should not exist (Want ""), or one column's value.
// Column "category" (scope 0) is a goods whose category's path has no rows
// to give: it loops or is deeper than MaxDepth (a tree written by hand);
// its rows are not compared.
type Diff struct {
	GoodsID, Scope int64
	Column         string
	Want, Got      string
}

func (d Diff) String() string {
	return fmt.Sprintf("goods %d scope %d %s: want %q, have %q", d.GoodsID, d.Scope, d.Column, d.Want, d.Got)
}

// reconcileBatch is how many goods one comparison reads at once.
const reconcileBatch = 500

// Reconcile recomputes every goods' listing rows from the truth and returns
// the differences (at most limit; nothing is corrected: Refresh of a goods
// rewrites its rows). It reads without a transaction, so a goods being
// edited or sold while it runs may show a difference that a second run no
// longer finds.
func Reconcile(ctx context.Context, c *ent.Client, limit int) ([]Diff, error) {
	cats, err := c.Category.Query().All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading categories: %w", err))
	}
	parent := make(map[int64]*int64, len(cats))
	for _, k := range cats {
		parent[k.ID] = k.ParentID
	}
	var diffs []Diff
	for lo := int64(math.MinInt64); len(diffs) < limit; {
		want, broken, next, err := truth(ctx, c, lo, parent)
		if err != nil {
			return nil, err
		}
		diffs = append(diffs, broken...)
		hi := next
		if hi == 0 {
			hi = math.MaxInt64
		}
		have, err := c.GoodsListing.Query().Where(goodslisting.GoodsIDGTE(lo), goodslisting.GoodsIDLTE(hi)).All(ctx)
		if err != nil {
			return nil, store.Classify(fmt.Errorf("reading the listing: %w", err))
		}
		diffs = append(diffs, compare(want, skipped(broken), have)...)
		if next == 0 {
			break
		}
		lo = next + 1
	}
	return diffs[:min(len(diffs), limit)], nil
}

type key struct{ goods, scope int64 }

// truth computes the listing rows of the next reconcileBatch live goods
// from id lo on, and a "category" Diff for each of them whose category
// gives no scopes; next is the last id read (0 when none is left after it).
func truth(ctx context.Context, c *ent.Client, lo int64, parent map[int64]*int64) (want map[key]*ent.GoodsListing, broken []Diff, next int64, err error) {
	var rows []struct {
		ID       int64             `sql:"id"`
		Status   enums.GoodsStatus `sql:"status"`
		Name     string            `sql:"name"`
		Code     string            `sql:"code"`
		Category *int64            `sql:"category_id"`
		Created  time.Time         `sql:"created_at"`
		Price    int64             `sql:"min_price"`
		Sales    int64             `sql:"sales"`
		InStock  bool              `sql:"in_stock"`
	}
	err = c.Goods.Query().Where(goods.IDGTE(lo)).Order(goods.ByID()).Limit(reconcileBatch).
		Modify(func(s *entsql.Selector) {
			id := s.C(goods.FieldID)
			s.Select(goods.FieldID, goods.FieldStatus, goods.FieldName, goods.FieldCode, goods.FieldCategoryID, goods.FieldCreatedAt,
				entsql.As(minPriceOf(id), "min_price"), entsql.As(salesOf(id), "sales"), entsql.As(inStockOf(id), "in_stock"))
		}).Scan(ctx, &rows)
	if err != nil {
		return nil, nil, 0, store.Classify(fmt.Errorf("recomputing the listing: %w", err))
	}
	want = map[key]*ent.GoodsListing{}
	var last int64
	for _, r := range rows {
		last = r.ID
		nameKey, searchKey := keys(r.Name, r.Code)
		scopes, err := scopesOf(r.Category, parent)
		if err != nil {
			broken = append(broken, Diff{GoodsID: r.ID, Column: "category", Want: fmt.Sprintf("a path of at most %d levels to a root", MaxDepth), Got: err.Error()})
			continue
		}
		for _, sc := range scopes {
			want[key{r.ID, sc}] = &ent.GoodsListing{Scope: sc, GoodsID: r.ID, Status: r.Status, NameKey: nameKey, SearchKey: searchKey,
				MinPrice: r.Price, Sales: r.Sales, InStock: r.InStock, CreatedAt: r.Created}
		}
	}
	n := len(rows)
	if n < reconcileBatch {
		last = 0
	}
	return want, broken, last, nil
}

// skipped is the goods of the "category" Diffs, whose rows are not compared.
func skipped(broken []Diff) map[int64]bool {
	skip := make(map[int64]bool, len(broken))
	for _, d := range broken {
		skip[d.GoodsID] = true
	}
	return skip
}

func compare(want map[key]*ent.GoodsListing, skip map[int64]bool, have []*ent.GoodsListing) []Diff {
	var diffs []Diff
	seen := map[key]bool{}
	for _, h := range have {
		if skip[h.GoodsID] {
			continue
		}
		k := key{h.GoodsID, h.Scope}
		seen[k] = true
		w, ok := want[k]
		if !ok {
			diffs = append(diffs, Diff{GoodsID: h.GoodsID, Scope: h.Scope, Column: "row", Got: "present"})
			continue
		}
		col := func(name string, a, b any) {
			if fmt.Sprint(a) != fmt.Sprint(b) {
				diffs = append(diffs, Diff{GoodsID: h.GoodsID, Scope: h.Scope, Column: name, Want: fmt.Sprint(a), Got: fmt.Sprint(b)})
			}
		}
		col(goodslisting.FieldStatus, w.Status, h.Status)
		col(goodslisting.FieldNameKey, w.NameKey, h.NameKey)
		col(goodslisting.FieldSearchKey, w.SearchKey, h.SearchKey)
		col(goodslisting.FieldMinPrice, w.MinPrice, h.MinPrice)
		col(goodslisting.FieldSales, w.Sales, h.Sales)
		col(goodslisting.FieldInStock, w.InStock, h.InStock)
		col(goodslisting.FieldCreatedAt, w.CreatedAt.UTC(), h.CreatedAt.UTC())
	}
	for k := range want {
		if !seen[k] {
			diffs = append(diffs, Diff{GoodsID: k.goods, Scope: k.scope, Column: "row", Want: "present"})
		}
	}
	return diffs
}
