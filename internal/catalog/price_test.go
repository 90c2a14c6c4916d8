package catalog_test

import (
	"context"
	"errors"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// A forgotten price must not become a free product: createGoods refuses every
// input that leaves a SKU at 0.00, as updateGoodsSpecs and updateSku do.
func TestCreateNeedsAPricePerSku(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		specs := []catalog.SpecInput{{Name: "颜色", Values: []string{"黑", "白"}}}
		price := money.MustParse("19.90")
		for _, tc := range []struct {
			name string
			in   catalog.CreateInput
		}{
			{"specs without defaultSku or skus", catalog.CreateInput{Specs: specs}},
			{"stock but no price", catalog.CreateInput{Specs: specs, DefaultSku: catalog.SkuTerms{Stock: 5}}},
			{"skus for some combinations only", catalog.CreateInput{Specs: specs,
				Skus: []catalog.SkuOverride{{Values: []string{"黑"}, SkuTerms: catalog.SkuTerms{SellPrice: price}}}}},
			{"an entry at 0.00 beside a default price", catalog.CreateInput{Specs: specs, DefaultSku: catalog.SkuTerms{SellPrice: price},
				Skus: []catalog.SkuOverride{{Values: []string{"白"}, SkuTerms: catalog.SkuTerms{Stock: 3}}}}},
			{"no specs and no price", catalog.CreateInput{DefaultSku: catalog.SkuTerms{Stock: 1}}},
		} {
			tc.in.Name, tc.in.Status = "袜子", enums.GoodsOnShelf
			before := countRows(t, db)
			if _, err := cat.Create(ctx, tc.in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: Create err = %v, want errs.InvalidInput", tc.name, err)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("%s: rows %+v -> %+v", tc.name, before, after)
			}
		}
		// Every combination priced by an entry needs no default price.
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "袜子", Status: enums.GoodsOnShelf, Specs: specs,
			Skus: []catalog.SkuOverride{
				{Values: []string{"黑"}, SkuTerms: catalog.SkuTerms{SellPrice: price}},
				{Values: []string{"白"}, SkuTerms: catalog.SkuTerms{SellPrice: price + 100}},
			}})
		if err != nil || g == nil {
			t.Fatalf("every SKU priced by skus: %v, %v", g, err)
		}
		for _, s := range skusOf(t, db, g.ID) {
			if s.SellPrice <= 0 {
				t.Errorf("SKU %d (%s) sells for %s", s.ID, s.SpecValueStr, s.SellPrice)
			}
		}
	})
}

// updateSku refuses a sell price of 0.00 or less and a negative cost price,
// and writes nothing.
func TestUpdateSkuNeedsAPrice(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		s := g.SkuList(false)[0]
		zero, neg := money.Money(0), money.Money(-1)
		for _, tc := range []struct {
			name string
			in   catalog.UpdateSkuInput
		}{
			{"sellPrice 0.00", catalog.UpdateSkuInput{SellPrice: &zero}},
			{"sellPrice -0.01", catalog.UpdateSkuInput{SellPrice: &neg}},
			{"costPrice -0.01", catalog.UpdateSkuInput{CostPrice: &neg}},
		} {
			tc.in.ItemID, tc.in.ExpectedVersion = s.ID, s.Version
			if got, err := cat.UpdateSku(ctx, tc.in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: UpdateSku err = %v, want errs.InvalidInput (SKU now %+v)", tc.name, err, got)
			}
		}
		if row := skuRow(t, db, s.ID); row.SellPrice != s.SellPrice || row.CostPrice != s.Cost || row.Version != s.Version {
			t.Errorf("refused edits changed the SKU: %+v", row)
		}
		if v := goodsRow(t, db, g.ID).Version; v != g.Version {
			t.Errorf("refused edits moved the goods version %d -> %d", g.Version, v)
		}
	})
}

// updateGoodsSpecs already refuses a new combination with no price at all;
// an explicit 0.00 (in defaultSku or an entry) is the same forgotten price.
func TestUpdateSpecsNeedsAPrice(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		withRed := func() []catalog.SpecEdit {
			s := form(g)
			s[0].Values = append(s[0].Values, catalog.ValueEdit{Name: "红色"})
			return s
		}
		price := money.MustParse("10.00")
		for _, tc := range []struct {
			name string
			in   catalog.UpdateSpecsInput
		}{
			{"defaultSku at 0.00 for new combinations", catalog.UpdateSpecsInput{Specs: withRed(), DefaultSku: &catalog.SkuTerms{Stock: 4}}},
			{"an entry at 0.00 for a new combination", catalog.UpdateSpecsInput{Specs: withRed(), DefaultSku: &catalog.SkuTerms{SellPrice: price},
				Skus: []catalog.SkuEdit{{Values: []string{"红色", "S"}}}}},
			{"an entry at 0.00 for an existing SKU", catalog.UpdateSpecsInput{Specs: form(g),
				Skus: []catalog.SkuEdit{{Values: []string{"黑色", "S"}}}}},
		} {
			// The current version, so that one case's wrong write does not turn
			// the next cases into version conflicts.
			version := goodsRow(t, db, g.ID).Version
			tc.in.GoodsID, tc.in.ExpectedVersion = g.ID, version
			before := countRows(t, db)
			if _, err := cat.UpdateSpecs(ctx, tc.in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: UpdateSpecs err = %v, want errs.InvalidInput", tc.name, err)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("%s: rows %+v -> %+v", tc.name, before, after)
			}
			if v := goodsRow(t, db, g.ID).Version; v != version {
				t.Errorf("%s: goods version %d -> %d", tc.name, version, v)
			}
		}
		for _, s := range skusOf(t, db, g.ID) {
			if s.SellPrice <= 0 {
				t.Errorf("SKU %d (%s) sells for %s", s.ID, s.SpecValueStr, s.SellPrice)
			}
		}
	})
}
