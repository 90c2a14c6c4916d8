package checkout

import (
	"context"
	"testing"

	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Units a pool gives back to main stock keep the listing's "in stock"
// right: a lock-mode goods whose only stock is locked in a pool by one
// order is out of stock in listings; the pool ends (nothing available to
// return), then the order is cancelled and its units go to main stock:
// the goods is in stock again (listing.Reconcile in poolsBalance).
func TestPoolReleaseRestocksTheListing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		var item int64
		for i, colour := range demo.ScarfColours {
			id := f.scarf(t, colour)
			if i > 0 {
				f.setStock(t, id, 0)
			} else {
				item = id
			}
		}
		p := f.lockPool(t, item, demo.ScarfStock, demo.ScarfStock)
		f.poolsBalance(t) // the goods is out of stock: all of it is in the pool
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u", IdempotencyKey: "all", Items: []ItemInput{fromPool(item, p.ID, demo.ScarfStock)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := inventory.New(db).ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u", false, o.OrderSn); err != nil {
			t.Fatal(err)
		}
		if s := f.stock(t, item); s != demo.ScarfStock {
			t.Errorf("main stock %d after the release, want %d", s, demo.ScarfStock)
		}
		f.poolsBalance(t)
	})
}
