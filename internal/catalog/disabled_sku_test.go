package catalog_test

import (
	"context"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// A disabled SKU cannot be bought, stock or not: its values grey out where it
// was the only SKU with stock, skuBySelection finds nothing for it, and its
// price and stock leave the price range and the total.
func TestDisabledSkuWithStockIsNotSelectable(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		terms := func(price string, stock int64) catalog.SkuTerms {
			return catalog.SkuTerms{SellPrice: money.MustParse(price), Stock: stock}
		}
		// 黑 has stock only in 黑/S, the one SKU at 199.00.
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "帽子", Status: enums.GoodsOnShelf,
			Specs: []catalog.SpecInput{{Name: "颜色", Values: []string{"黑", "白"}}, {Name: "尺码", Values: []string{"S", "M"}}},
			Skus: []catalog.SkuOverride{
				{Values: []string{"黑", "S"}, SkuTerms: terms("199.00", 5)},
				{Values: []string{"黑", "M"}, SkuTerms: terms("99.00", 0)},
				{Values: []string{"白", "S"}, SkuTerms: terms("99.00", 5)},
				{Values: []string{"白", "M"}, SkuTerms: terms("99.00", 5)},
			}})
		if err != nil || g == nil {
			t.Fatalf("Create = %v, %v", g, err)
		}
		black, white, s, m := valueID(t, g, "黑"), valueID(t, g, "白"), valueID(t, g, "S"), valueID(t, g, "M")
		if got := selectable(t, g, nil); !got["黑"] {
			t.Fatalf("before disabling, 黑 is not selectable: %v", got)
		}
		blackS, err := g.SkuBySelection([]int64{black, s})
		if err != nil || blackS == nil {
			t.Fatalf("黑/S = %v, %v", blackS, err)
		}
		off := enums.SkuDisabled
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: blackS.ID, ExpectedVersion: blackS.Version, Status: &off}); err != nil {
			t.Fatalf("disabling 黑/S: %v", err)
		}

		for _, v := range []catalog.Viewer{{}, {Admin: true}} {
			g, err := cat.Goods(ctx, v, g.ID)
			if err != nil || g == nil {
				t.Fatalf("%+v: Goods = %v, %v", v, g, err)
			}
			for _, tc := range []struct {
				name     string
				selected []int64
				want     map[string]bool
			}{
				{"nothing selected", nil, map[string]bool{"黑": false, "白": true, "S": true, "M": true}},
				{"S selected", []int64{s}, map[string]bool{"黑": false, "白": true, "S": true, "M": true}},
				{"M selected", []int64{m}, map[string]bool{"黑": false, "白": true, "S": true, "M": true}},
				{"白 selected", []int64{white}, map[string]bool{"黑": false, "白": true, "S": true, "M": true}},
				// 黑 picked anyway: no size can complete it, and the other colour stays choosable.
				{"黑 selected", []int64{black}, map[string]bool{"黑": false, "白": true, "S": false, "M": false}},
			} {
				got := selectable(t, g, tc.selected)
				for name, want := range tc.want {
					if got[name] != want {
						t.Errorf("%+v, %s: selectable[%s] = %v, want %v (all: %v)", v, tc.name, name, got[name], want, got)
					}
				}
			}
			for _, sel := range [][]int64{{black, s}, {s, black}} {
				if k, err := g.SkuBySelection(sel); k != nil || err != nil {
					t.Errorf("%+v: SkuBySelection(%v) = %+v, %v; want nil, nil for a disabled SKU", v, sel, k, err)
				}
			}
			if k, err := g.SkuBySelection([]int64{black, m}); err != nil || k == nil || k.Stock != 0 {
				t.Errorf("%+v: 黑/M (enabled, no stock) = %+v, %v; want the SKU", v, k, err)
			}
			if pr := g.PriceRange(); pr == nil || pr.Min != money.MustParse("99.00") || pr.Max != money.MustParse("99.00") {
				t.Errorf("%+v: PriceRange = %+v, want 99.00–99.00 without the disabled 199.00", v, pr)
			}
			if n := g.TotalStock(); n != 10 {
				t.Errorf("%+v: TotalStock = %d, want 10 without the disabled SKU's 5", v, n)
			}
			if n, all := len(g.SkuList(false)), len(g.SkuList(true)); n != 3 || all != 4 {
				t.Errorf("%+v: %d enabled of %d SKUs, want 3 of 4", v, n, all)
			}
		}
	})
}

// selectable answers Selectable(selected) by value name.
func selectable(t *testing.T, g *catalog.Goods, selected []int64) map[string]bool {
	t.Helper()
	list, err := g.Selectable(selected)
	if err != nil {
		t.Fatalf("Selectable(%v): %v", selected, err)
	}
	names := map[int64]string{}
	for _, sp := range g.Specs {
		for _, v := range sp.Values {
			names[v.ID] = v.Name
		}
	}
	out := map[string]bool{}
	for _, v := range list {
		out[names[v.SpecValueID]] = v.Selectable
	}
	return out
}
