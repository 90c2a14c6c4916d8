package catalog_test

import (
	"context"
	"errors"
	"testing"

	"storefront/ent"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

func seeded(t *testing.T, db *store.DB) (*catalog.Service, map[string]int64) {
	t.Helper()
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(context.Background(), cat)
	if err != nil {
		t.Fatalf("demo.Seed: %v", err)
	}
	return cat, ids
}

func TestDemoTShirtProductView(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat, ids := seeded(t, db)
		g, err := cat.Goods(ctx, catalog.Viewer{}, ids[demo.TShirtCode])
		if err != nil || g == nil {
			t.Fatalf("Goods = %v, %v", g, err)
		}
		if n := len(g.SkuList(false)); n != 12 {
			t.Errorf("enabled SKUs = %d, want 12", n)
		}
		if pr := g.PriceRange(); pr == nil || pr.Min != money.MustParse("89.00") || pr.Max != money.MustParse("129.00") {
			t.Errorf("PriceRange = %+v, want 89.00–129.00", pr)
		}
		var want int64
		for _, n := range demo.TShirtStock {
			want += n
		}
		if got := g.TotalStock(); got != want {
			t.Errorf("TotalStock = %d, want %d", got, want)
		}
		black, l := valueID(t, g, "黑色"), valueID(t, g, "L")
		a, errA := g.SkuBySelection([]int64{black, l})
		b, errB := g.SkuBySelection([]int64{l, black})
		if errA != nil || errB != nil || a == nil || a != b {
			t.Fatalf("SkuBySelection orders disagree: %v/%v, %v/%v", a, errA, b, errB)
		}
		if a.SpecValueStr != "黑色,L" || a.Stock != 200 || a.SpecKey != skumatrix.SpecKey([]int64{black, l}) {
			t.Errorf("黑色/L = %+v", a)
		}
		// 黑色 has no stock in S and XL: exactly those sizes are greyed out.
		sel, err := g.Selectable([]int64{black})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]bool{}
		for _, v := range sel {
			got[v.SpecValueID] = v.Selectable
		}
		for size, wantSel := range map[string]bool{"S": false, "M": true, "L": true, "XL": false} {
			if got[valueID(t, g, size)] != wantSel {
				t.Errorf("selectable(黑色)[%s] = %v, want %v", size, got[valueID(t, g, size)], wantSel)
			}
		}
		for _, colour := range []string{"黑色", "白色", "藏青"} {
			if !got[valueID(t, g, colour)] {
				t.Errorf("selectable(黑色)[%s] = false, want true (other colours stay choosable)", colour)
			}
		}
	})
}

func TestSelectionErrors(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat, ids := seeded(t, db)
		g, err := cat.Goods(ctx, catalog.Viewer{}, ids[demo.TShirtCode])
		if err != nil || g == nil {
			t.Fatalf("Goods = %v, %v", g, err)
		}
		black, white, l := valueID(t, g, "黑色"), valueID(t, g, "白色"), valueID(t, g, "L")
		for name, sel := range map[string][]int64{
			"two values of one dimension": {black, white},
			"unknown id":                  {black, 999999},
			"more ids than dimensions":    {black, l, white},
		} {
			if _, err := g.SkuBySelection(sel); !errors.Is(err, skumatrix.ErrInvalidSelection) {
				t.Errorf("SkuBySelection(%s) error = %v, want ErrInvalidSelection", name, err)
			}
			if _, err := g.Selectable(sel); !errors.Is(err, skumatrix.ErrInvalidSelection) {
				t.Errorf("Selectable(%s) error = %v, want ErrInvalidSelection", name, err)
			}
		}
		if s, err := g.SkuBySelection([]int64{black}); s != nil || err != nil {
			t.Errorf("partial selection = %v, %v; want nil, nil", s, err)
		}
	})
}

func TestSingleSpecGoods(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		cat, ids := seeded(t, db)
		g, err := cat.Goods(context.Background(), catalog.Viewer{}, ids[demo.BagCode])
		if err != nil || g == nil {
			t.Fatalf("Goods = %v, %v", g, err)
		}
		if g.SpecType != enums.SpecSingle || len(g.SkuList(false)) != 1 || len(g.Specs) != 0 {
			t.Fatalf("bag = %+v with %d SKUs", g, len(g.SkuList(false)))
		}
		s, err := g.SkuBySelection(nil)
		if err != nil || s == nil || s.Stock != 100 {
			t.Errorf("default SKU = %+v, %v", s, err)
		}
		if pr := g.PriceRange(); pr == nil || pr.Min != pr.Max || pr.Min != money.MustParse("39.00") {
			t.Errorf("PriceRange = %+v", pr)
		}
	})
}

// The unique key, not application code, refuses a second SKU with the same
// (goods, spec key): concurrent saves and imports cannot get around it.
func TestDuplicateSpecKeyRefusedByDatabase(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		_, ids := seeded(t, db)
		shirtSkus := skusOf(t, db, ids[demo.TShirtCode])
		if len(shirtSkus) == 0 {
			t.Fatal("the demo T-shirt has no SKUs")
		}
		existing := shirtSkus[0]
		_, err := db.Client.Sku.Create().SetGoodsID(existing.GoodsID).SetSpecKey(existing.SpecKey).
			SetSpecValueIds(existing.SpecValueIds).Save(ctx)
		if !ent.IsConstraintError(err) {
			t.Fatalf("second SKU with spec key %q: err = %v, want a constraint error", existing.SpecKey, err)
		}
		// Not set means NULL, and NULLs do not collide.
		for range 2 {
			if _, err := db.Client.Sku.Create().SetGoodsID(existing.GoodsID).SetSpecKey("x" + randKey()).Save(ctx); err != nil {
				t.Fatalf("SKU without sku_code: %v", err)
			}
		}
		code := "WMS-1"
		must.NoErr(t, db.Client.Sku.Create().SetGoodsID(existing.GoodsID).SetSpecKey("y1").SetSkuCode(code).Exec(ctx))
		if _, err := db.Client.Sku.Create().SetGoodsID(existing.GoodsID).SetSpecKey("y2").SetSkuCode(code).Save(ctx); !ent.IsConstraintError(err) {
			t.Errorf("duplicate sku_code: err = %v, want a constraint error", err)
		}
	})
}

var keyN int

func randKey() string { keyN++; return string(rune('a' + keyN)) }

// Every SKU starts with an opening ledger row, so stock = ledger sum holds
// from the first row.
func TestOpeningLedgerBalances(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		seeded(t, db)
		skus := skusOf(t, db, 0)
		if want := 12 + 1 + 500 + len(demo.ScarfColours); len(skus) != want {
			t.Fatalf("SKUs = %d, want %d (T-shirt, bag, shoe, scarf)", len(skus), want)
		}
		var rows []struct {
			ItemID int64 `json:"item_id"`
			Sum    int64 `json:"sum"`
		}
		err := db.Client.StockLog.Query().GroupBy("item_id").Aggregate(ent.Sum("change_num")).Scan(ctx, &rows)
		if err != nil {
			t.Fatal(err)
		}
		sums := map[int64]int64{}
		for _, r := range rows {
			sums[r.ItemID] = r.Sum
		}
		for _, s := range skus {
			if l, ok := sums[s.ID]; !ok || l != s.Stock {
				t.Errorf("SKU %d: stock %d, ledger sum %d (row present: %v)", s.ID, s.Stock, l, ok)
			}
		}
	})
}

func TestSeedIsIdempotent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		_, first := seeded(t, db)
		before := countRows(t, db)
		_, second := seeded(t, db)
		if after := countRows(t, db); first[demo.TShirtCode] != second[demo.TShirtCode] || after != before {
			t.Errorf("second seed changed the catalog: ids %v -> %v, rows %+v -> %+v", first, second, before, after)
		}
	})
}

func TestListPagingAndVisibility(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat, _ := seeded(t, db)
		_, err := cat.Create(ctx, catalog.CreateInput{Name: "hidden", Status: enums.GoodsOffShelf,
			DefaultSku: catalog.SkuTerms{SellPrice: 100, Stock: 1}})
		if err != nil {
			t.Fatal(err)
		}
		var seen []int64
		after := ""
		for {
			p, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{First: 2, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range p.Goods {
				seen = append(seen, g.ID)
			}
			if !p.HasNextPage {
				break
			}
			after = p.Cursors[len(p.Cursors)-1]
		}
		if len(seen) != 4 {
			t.Errorf("customer sees %v, want the 4 on-shelf demo goods", seen)
		}
		all, err := cat.List(ctx, catalog.Viewer{Admin: true}, catalog.ListParams{First: 100})
		if err != nil {
			t.Fatal(err)
		}
		if len(all.Goods) != 5 {
			t.Errorf("admin sees %d goods, want 5 (4 demo goods and the hidden one)", len(all.Goods))
		}
		if _, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{After: "garbage"}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("bad cursor: %v", err)
		}
	})
}

func valueID(t *testing.T, g *catalog.Goods, name string) int64 {
	t.Helper()
	for _, s := range g.Specs {
		for _, v := range s.Values {
			if v.Name == name {
				return v.ID
			}
		}
	}
	t.Fatalf("goods %d has no value %q", g.ID, name)
	return 0
}
