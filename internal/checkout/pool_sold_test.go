package checkout

import (
	"context"
	"testing"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// StockPool.sold counts the pool's orders that stand: a cancel after the
// pool's return restores to main stock, and its units are no longer sold
// (issue 25, section 6: it showed 3 where 1 stood).
func TestPoolSoldAfterReturn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		inv := inventory.New(db)
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 10)
		p := f.newPool(t, id, 4, 2, -time.Minute)
		sold := func(want int64, when string) {
			t.Helper()
			got, err := inv.Pool(ctx, p.ID)
			if err != nil || got.Sold != want {
				t.Errorf("%s: sold %v (%v), want %d", when, got, err, want)
			}
		}
		o1, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 2)}})
		if err != nil {
			t.Fatal(err)
		}
		o2, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(id, p.ID, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		o3, err := f.svc.Place(ctx, PlaceInput{UserID: "u3", Items: []ItemInput{fromPool(id, p.ID, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		// A cancel while the pool sells restores to the pool itself.
		if _, err := f.svc.CancelOrder(ctx, "u3", false, o3.OrderSn); err != nil {
			t.Fatal(err)
		}
		sold(3, "two orders of 3 units and a cancelled one, on sale")
		if _, err := inv.ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		sold(3, "after the return of the 1 left")
		if _, err := f.svc.CancelOrder(ctx, "u1", false, o1.OrderSn); err != nil {
			t.Fatal(err)
		}
		sold(1, "after a cancel of 2 that went back to main stock")
		if _, err := f.svc.CancelOrder(ctx, "u2", false, o2.OrderSn); err != nil {
			t.Fatal(err)
		}
		sold(0, "after every order was cancelled")
		f.poolsBalance(t)
	})
}
