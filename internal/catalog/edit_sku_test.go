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

func TestUpdateSku(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		s := g.SkuList(false)[0]
		price := money.MustParse("79.90")
		got, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: s.Version, SellPrice: &price, SkuCode: new(" WMS-9 ")})
		if err != nil {
			t.Fatal(err)
		}
		if got.SellPrice != price || got.SkuCode == nil || *got.SkuCode != "WMS-9" || got.Version != s.Version+1 || got.Stock != s.Stock {
			t.Errorf("UpdateSku = %+v", got)
		}
		if v := goodsRow(t, db, g.ID).Version; v != g.Version+1 {
			t.Errorf("goods version %d, want %d: a price is catalog data", v, g.Version+1)
		}
		// The product view shows the edit at once (the cache follows the version).
		if view, err := cat.Goods(ctx, catalog.Viewer{}, g.ID); err != nil || view == nil || view.SkuList(false)[0].SellPrice != price {
			t.Errorf("product view after the edit: %+v", view)
		}
		before := countRows(t, db)
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: s.Version, SellPrice: &price}); !errors.Is(err, errs.VersionConflict) {
			t.Errorf("stale version: %v", err)
		}
		other := g.SkuList(false)[1]
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: other.ID, ExpectedVersion: other.Version, SkuCode: new("WMS-9")}); !errors.Is(err, catalog.ErrSkuCodeTaken) {
			t.Errorf("taken code: %v", err)
		}
		neg := money.Money(-1)
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: other.ID, ExpectedVersion: other.Version, LineationPrice: &neg}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("negative lineation price: %v", err)
		}
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: 999999, ExpectedVersion: 1}); !errors.Is(err, errs.NotFound) {
			t.Errorf("unknown SKU: %v", err)
		}
		if after := countRows(t, db); after != before {
			t.Errorf("rows %+v -> %+v", before, after)
		}
		if v := goodsRow(t, db, g.ID).Version; v != g.Version+1 {
			t.Errorf("refused edits moved the goods version to %d", v)
		}
		// Clearing the code stores NULL, and a lineation price below the sell price is fine.
		low := money.MustParse("1.00")
		got, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: got.Version, SkuCode: new(""), LineationPrice: &low})
		if err != nil || got.SkuCode != nil || got.LineationPrice != low {
			t.Errorf("clearing the code: %+v, %v", got, err)
		}
	})
}

func TestUpdateSkuStatus(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		s := g.SkuList(false)[0]
		off, on := enums.SkuDisabled, enums.SkuEnabled
		got, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: s.Version, Status: &off})
		if err != nil || got.Status != off {
			t.Fatalf("disable: %+v, %v", got, err)
		}
		view := adminView(t, cat, g.ID)
		if len(view.SkuList(false)) != 11 || len(view.SkuList(true)) != 12 {
			t.Errorf("enabled %d / all %d, want 11 / 12", len(view.SkuList(false)), len(view.SkuList(true)))
		}
		if got, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: got.Version, Status: &on}); err != nil || got.Status != on {
			t.Fatalf("enable again: %+v, %v", got, err)
		}
		// A SKU retired by a spec edit names a removed value: enabling it would
		// put an unpickable price on the page.
		specs := form(view)
		specs[0].Values = specs[0].Values[1:]
		if _, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: view.Version + 1, Specs: specs}); err != nil {
			t.Fatal(err)
		}
		retired := skuRow(t, db, s.ID)
		if retired.Status != off {
			t.Fatalf("SKU of the removed value is %s", retired.Status)
		}
		if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: retired.Version, Status: &on}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("enabling a retired SKU: %v", err)
		}
	})
}

func TestSetGoodsStatus(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		if v, _ := cat.Goods(ctx, catalog.Viewer{}, g.ID); v == nil {
			t.Fatal("on-shelf goods invisible")
		}
		got, err := cat.SetStatus(ctx, g.ID, enums.GoodsOffShelf)
		if err != nil || got.Status != enums.GoodsOffShelf || got.Version != g.Version+1 {
			t.Fatalf("SetStatus = %+v, %v", got, err)
		}
		if v, _ := cat.Goods(ctx, catalog.Viewer{}, g.ID); v != nil {
			t.Error("a customer still sees the off-shelf goods")
		}
		if v, _ := cat.Goods(ctx, catalog.Viewer{Admin: true}, g.ID); v == nil {
			t.Error("an admin cannot see the off-shelf goods")
		}
		if _, err := cat.SetStatus(ctx, 999999, enums.GoodsOnShelf); !errors.Is(err, errs.NotFound) {
			t.Errorf("unknown goods: %v", err)
		}
		if _, err := cat.SetStatus(ctx, g.ID, "SOLD"); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("unknown status: %v", err)
		}
	})
}
