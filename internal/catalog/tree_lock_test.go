package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// A category move beside edits of the goods it moves: the move holds the
// tree exclusively and then locks the subtree's goods; a goods edit locked
// its goods row and then read the tree shared for the listing, so on
// MariaDB the two deadlocked (159 retries in 10 s of moves beside price
// edits, 19 of 234 moves UNAVAILABLE). Every goods edit now takes the tree
// shared before its goods row (bumpGoods), so no transaction is retried.
func TestCategoryMovesBesideGoodsEditsDoNotDeadlock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, ids := seeded(t, db)
		t.Cleanup(s.Close)
		// The T-shirt's category (a root) moves under D and back; the
		// admins edit the T-shirt, its SKUs' prices, name and status.
		shirt, err := db.Client.Goods.Get(ctx, ids[demo.TShirtCode])
		must.NoErr(t, err)
		if shirt.CategoryID == nil {
			t.Fatal("the demo T-shirt has no category")
		}
		b := &catalog.Category{ID: *shirt.CategoryID}
		d := newCategory(t, s, "D", nil)
		goodsIDs := []int64{shirt.ID, shirt.ID}
		var retries atomic.Int64
		saved := store.OnRetry
		store.OnRetry = func(cause string) { retries.Add(1); saved(cause) }
		defer func() { store.OnRetry = saved }()

		var (
			wg     sync.WaitGroup
			done   atomic.Bool
			edits  atomic.Int64
			failed atomic.Value
		)
		fail := func(what string, err error) { failed.CompareAndSwap(nil, fmt.Sprintf("%s: %v", what, err)) }
		// The mover: B under D and back, 60 times.
		wg.Go(func() {
			defer done.Store(true)
			for i := range 60 {
				move := catalog.CategoryEdit{ID: b.ID, ParentID: &d.ID}
				if i%2 == 1 {
					move = catalog.CategoryEdit{ID: b.ID, ToRoot: true}
				}
				if _, err := s.UpdateCategory(ctx, move); err != nil {
					fail("move", err)
					return
				}
			}
		})
		// Two editors of SKU prices and two of the goods' name and status,
		// each from a fresh read every time, until the mover is done.
		skuIDs, err := db.Client.Sku.Query().Where(sku.GoodsID(shirt.ID)).Order(sku.ByID()).IDs(ctx)
		must.NoErr(t, err)
		for e, id := range goodsIDs {
			wg.Go(func() {
				skuID := skuIDs[e*len(skuIDs)/2]
				for i := 0; !done.Load(); i++ {
					cur, err := db.Client.Sku.Get(ctx, skuID)
					if err != nil {
						fail("read", err)
						return
					}
					p := money.Money(500 + i%50)
					_, err = s.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: skuID, ExpectedVersion: cur.Version, SellPrice: &p})
					if err != nil && !errors.Is(err, errs.VersionConflict) {
						fail("updateSku", err)
						return
					}
					edits.Add(1)
				}
			})
			wg.Go(func() {
				for i := 0; !done.Load(); i++ {
					g, err := db.Client.Goods.Get(ctx, id)
					if err != nil {
						fail("read", err)
						return
					}
					name := fmt.Sprint("Moved ", id, " #", i)
					_, err = s.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: id, ExpectedVersion: g.Version, Name: &name})
					if err == nil {
						status := enums.GoodsOnShelf
						if i%2 == 1 {
							status = enums.GoodsOffShelf
						}
						_, err = s.SetStatus(ctx, id, status)
					}
					if err != nil && !errors.Is(err, errs.VersionConflict) {
						fail("updateGoods", err)
						return
					}
					edits.Add(1)
				}
			})
		}
		wg.Wait()
		if f := failed.Load(); f != nil {
			t.Fatal(f)
		}
		t.Logf("60 moves beside %d goods edits, %d retries", edits.Load(), retries.Load())
		if n := retries.Load(); n != 0 {
			t.Errorf("%d transactions retried (deadlocks between moves and goods edits), want none", n)
		}
		noDiffs(t, db, "after the race")
	})
}
