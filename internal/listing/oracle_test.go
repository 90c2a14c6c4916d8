package listing_test

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"storefront/ent"
	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// truth is one goods as the oracle sees it, read from the goods and sku
// rows (never from goods_listing).
type truth struct {
	id       int64
	name     string
	code     string
	status   enums.GoodsStatus
	scopes   map[int64]bool
	price    int64 // listing.NoPrice without an enabled SKU
	sales    int64
	inStock  bool
	created  time.Time
	category *int64
}

// readTruth recomputes every goods' listing values in Go from the full data.
func readTruth(t *testing.T, db *store.DB) []truth {
	t.Helper()
	ctx := context.Background()
	cats, err := db.Client.Category.Query().All(ctx)
	must.NoErr(t, err)
	parent := map[int64]*int64{}
	for _, c := range cats {
		parent[c.ID] = c.ParentID
	}
	rows, err := db.Client.Goods.Query().WithSkus().All(ctx)
	must.NoErr(t, err)
	out := make([]truth, 0, len(rows))
	for _, g := range rows {
		tr := truth{id: g.ID, name: g.Name, code: g.Code, status: g.Status, price: listing.NoPrice, created: g.CreatedAt,
			scopes: map[int64]bool{listing.All: true}, category: g.CategoryID}
		for c := g.CategoryID; c != nil; c = parent[*c] {
			tr.scopes[*c] = true
		}
		for _, s := range g.Edges.Skus {
			tr.sales += s.Volume
			if s.Status != enums.SkuEnabled {
				continue
			}
			tr.price = min(tr.price, int64(s.SellPrice))
			tr.inStock = tr.inStock || s.Stock-s.LockStock > 0
		}
		out = append(out, tr)
	}
	return out
}

type query struct {
	name   string
	admin  bool
	params catalog.ListParams
}

// expect is the oracle: the ids a listing must give, in order.
func expect(all []truth, q query) []int64 {
	p := q.params
	var keep []truth
	for _, g := range all {
		switch {
		case !q.admin && g.status != enums.GoodsOnShelf,
			q.admin && p.Status != nil && g.status != *p.Status,
			p.CategoryID != nil && !g.scopes[*p.CategoryID],
			p.Search != "" && !strings.Contains(strings.ToLower(g.name)+"\x1f"+strings.ToLower(g.code), strings.ToLower(p.Search)),
			(p.PriceMin != nil || p.PriceMax != nil) && g.price == listing.NoPrice,
			p.PriceMin != nil && g.price < int64(*p.PriceMin),
			p.PriceMax != nil && g.price > int64(*p.PriceMax),
			p.InStock != nil && g.inStock != *p.InStock:
			continue
		}
		keep = append(keep, g)
	}
	by := func(a, b truth) int {
		var c int
		switch p.Sort {
		case listing.ByName:
			c = strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
		case listing.ByPrice:
			c = cmp.Compare(a.price, b.price)
		case listing.BySales:
			c = cmp.Compare(a.sales, b.sales)
		case listing.ByCreated:
			c = a.created.Compare(b.created)
		}
		c = cmp.Or(c, cmp.Compare(a.id, b.id))
		if p.Desc {
			return -c
		}
		return c
	}
	slices.SortFunc(keep, by)
	ids := make([]int64, len(keep))
	for i, g := range keep {
		ids[i] = g.id
	}
	return ids
}

var names = []string{"纯棉圆领T恤", "纯棉长袖衬衫", "真丝围巾", "Linen Shirt", "linen shirt", "Cotton Tee", "50% Wool", "wool_blend scarf",
	"Canvas Bag", "帆布包", "Running Shoe", "跑鞋 Pro", "zebra socks", "Apple Cap", "苹果帽"}

// seed writes n random goods through the catalog (and their sales through
// inventory.Sold, the payment's call), under a small category tree.
func seed(t *testing.T, db *store.DB, n int, r *rand.Rand) (*catalog.Service, []int64) {
	t.Helper()
	ctx := context.Background()
	s := catalog.New(db, catalog.DefaultConfig())
	t.Cleanup(s.Close)
	cat := func(name string, parent *int64) *int64 {
		c, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: name, ParentID: parent})
		must.NoErr(t, err)
		return &c.ID
	}
	a := cat("Clothes", nil)
	a1 := cat("Tops", a)
	a1a := cat("T-Shirts", a1)
	b := cat("Bags", nil)
	b1 := cat("手提包", b)
	cats := []*int64{nil, a, a1, a1a, a1a, b, b1}
	for i := range n {
		status := enums.GoodsOnShelf
		if r.IntN(5) == 0 {
			status = enums.GoodsOffShelf
		}
		code := ""
		if r.IntN(3) > 0 {
			code = fmt.Sprintf("C%03d-%s", i, []string{"AB", "x_y", "p%q", "Zed"}[r.IntN(4)])
		}
		in := catalog.CreateInput{
			Name: names[r.IntN(len(names))], Code: code, Status: status, CategoryID: cats[r.IntN(len(cats))],
			Specs:      []catalog.SpecInput{{Name: "尺码", Values: []string{"S", "M", "L"}}},
			DefaultSku: catalog.SkuTerms{SellPrice: money.Money(100 + 100*r.Int64N(50))},
		}
		for _, v := range []string{"S", "M", "L"} {
			stock := int64(0)
			if r.IntN(3) == 0 {
				stock = r.Int64N(5)
			}
			on := r.IntN(6) > 0
			in.Skus = append(in.Skus, catalog.SkuOverride{Values: []string{v}, Enabled: &on,
				SkuTerms: catalog.SkuTerms{SellPrice: money.Money(100 + 100*r.Int64N(50)), Stock: stock}})
		}
		g, err := s.Create(ctx, in)
		must.NoErr(t, err)
		if sold := r.Int64N(4); sold > 0 {
			sku := g.SkuList(true)[r.IntN(3)]
			must.NoErr(t, store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				return inventory.Sold(ctx, tx, []inventory.RestoreLine{{ItemID: sku.ID, GoodsID: g.ID, Num: sold * 3}})
			}))
		}
	}
	return s, []int64{*a, *a1, *a1a, *b, *b1}
}

// TestListingOracle: 300 random goods, every sort and direction with each
// filter (and a few together), paged at first: 7 to the end, equal to the
// oracle's answer computed in Go from the goods and sku rows, and
// totalCount equal to its length.
func TestListingOracle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(19, 300))
		s, cats := seed(t, db, 300, r)
		all := readTruth(t, db)
		m := func(s string) *money.Money { v := money.MustParse(s); return &v }
		yes, no := true, false
		off := enums.GoodsOffShelf
		filters := []query{
			{name: "none"},
			{name: "root category", params: catalog.ListParams{CategoryID: &cats[0]}},
			{name: "middle category", params: catalog.ListParams{CategoryID: &cats[1]}},
			{name: "leaf category", params: catalog.ListParams{CategoryID: &cats[2]}},
			{name: "chinese category", params: catalog.ListParams{CategoryID: &cats[4]}},
			{name: "search 纯棉", params: catalog.ListParams{Search: "纯棉"}},
			{name: "search SHIRT", params: catalog.ListParams{Search: "SHIRT"}},
			{name: "search %", params: catalog.ListParams{Search: "%"}},
			{name: "search _", params: catalog.ListParams{Search: "_"}},
			{name: "search code", params: catalog.ListParams{Search: "c01"}},
			{name: "priceMin", params: catalog.ListParams{PriceMin: m("20.00")}},
			{name: "priceMax", params: catalog.ListParams{PriceMax: m("10.00")}},
			{name: "price range", params: catalog.ListParams{PriceMin: m("5.00"), PriceMax: m("15.00")}},
			{name: "in stock", params: catalog.ListParams{InStock: &yes}},
			{name: "out of stock", params: catalog.ListParams{InStock: &no}},
			{name: "everything", params: catalog.ListParams{CategoryID: &cats[0], Search: "t", PriceMax: m("40.00"), InStock: &yes}},
			{name: "customer asks off shelf", params: catalog.ListParams{Status: &off}},
			{name: "admin all", admin: true},
			{name: "admin off shelf", admin: true, params: catalog.ListParams{Status: &off, CategoryID: &cats[0]}},
		}
		nonEmpty := 0
		for _, f := range filters {
			for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
				for _, desc := range []bool{false, true} {
					q := f
					q.params.Sort, q.params.Desc, q.params.First, q.params.Count = sort, desc, 7, true
					want := expect(all, q)
					if len(want) > 7 {
						nonEmpty++
					}
					var got []int64
					for page := 0; ; page++ {
						p, err := s.List(ctx, catalog.Viewer{Admin: q.admin}, q.params)
						if err != nil {
							t.Fatalf("%s by %s desc=%v page %d: %v", f.name, sort, desc, page, err)
						}
						if page == 0 && p.Total != int64(len(want)) {
							t.Errorf("%s by %s desc=%v: totalCount %d, want %d", f.name, sort, desc, p.Total, len(want))
						}
						for _, g := range p.Goods {
							got = append(got, g.ID)
						}
						if !p.HasNextPage || page > 60 {
							break
						}
						q.params.After = p.Cursors[len(p.Cursors)-1]
					}
					if !slices.Equal(got, want) {
						t.Errorf("%s by %s desc=%v:\n got %v\nwant %v", f.name, sort, desc, got, want)
					}
				}
			}
		}
		if nonEmpty < 100 {
			t.Errorf("only %d of the listings span more than one page: the data proves little", nonEmpty)
		}
	})
}
