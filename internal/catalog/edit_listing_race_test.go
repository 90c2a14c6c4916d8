package catalog_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// An admin editing a SKU while another moves its goods between no category
// and a nested one: each edit rewrites the goods' listing rows, and neither
// may meet the other's rows (a duplicate key) or leave them behind. An edit
// whose transaction read before the move committed must still replace every
// row the move wrote (helper-17's review found 25 of 600 edits failing with
// a duplicate key when old rows were found by a plain read).
func TestConcurrentEditsRewriteTheListing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) { concurrentEditsRewriteTheListing(t, db) })
}

func concurrentEditsRewriteTheListing(t *testing.T, db *store.DB) {
	ctx := context.Background()
	cat := catalog.New(db, catalog.DefaultConfig())
	t.Cleanup(cat.Close)
	root, err := cat.CreateCategory(ctx, catalog.CategoryInput{Name: "root"})
	must.NoErr(t, err)
	leaf, err := cat.CreateCategory(ctx, catalog.CategoryInput{Name: "leaf", ParentID: &root.ID})
	must.NoErr(t, err)
	g, err := cat.Create(ctx, catalog.CreateInput{Name: "g", Code: "RACE-X", Status: enums.GoodsOnShelf,
		DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("1.00"), Stock: 1}})
	must.NoErr(t, err)
	skuID, err := db.Client.Sku.Query().Where(sku.GoodsID(g.ID)).FirstID(ctx)
	must.NoErr(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	dups, other := 0, 0
	note := func(err error) {
		if err == nil || errors.Is(err, errs.VersionConflict) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if store.IsDuplicate(err) {
			if dups++; dups == 1 {
				t.Logf("first: %v", err)
			}
		} else if other++; other <= 3 {
			t.Logf("other: %v", err)
		}
	}
	wg.Go(func() {
		for i := range 300 {
			cur, err := db.Client.Sku.Get(ctx, skuID)
			if err != nil {
				note(err)
				continue
			}
			p := money.Money(100 + i)
			_, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: skuID, ExpectedVersion: cur.Version, SellPrice: &p})
			note(err)
		}
	})
	wg.Go(func() {
		for i := range 300 {
			cur, err := db.Client.Goods.Get(ctx, g.ID)
			if err != nil {
				note(err)
				continue
			}
			in := catalog.UpdateGoodsInput{GoodsID: g.ID, ExpectedVersion: cur.Version}
			if i%2 == 0 {
				in.CategoryID = &leaf.ID
			} else {
				in.ClearCategory = true
			}
			_, err = cat.UpdateGoods(ctx, in)
			note(err)
		}
	})
	wg.Wait()
	if dups > 0 || other > 0 {
		t.Fatalf("%d duplicate-key failures, %d other failures", dups, other)
	}
	if diffs, err := listing.Reconcile(ctx, db.Client, 10); err != nil || len(diffs) != 0 {
		t.Errorf("listing after the race: %v, %v; want it to match its goods", diffs, err)
	}
}
