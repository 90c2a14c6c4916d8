package checkout

import (
	"context"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/goodslisting"
	"storefront/ent/sku"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A restore takes the listing rows of its own goods and no others: a cancel
// and a claim of the timeout closer that give a sold-out goods its stock
// back finish while another transaction holds the listing rows of another
// goods (here a payment counting the T-shirt's sales). At 52fadce the
// restore's listing UPDATE found its goods through a subquery, which
// MariaDB 10.11 runs for every listing row, scanning and locking the whole
// table: the cancel waited for the payment (and, in the soak of issue 38,
// deadlocked: "marking the goods of SKUs [1 8] in stock: Error 1213").
func TestRestoreHoldsOnlyItsGoodsListing(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		bag, err := db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.BagCode])).OnlyID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.setStock(t, bag, 3)
		var sns []string
		for _, u := range []string{"u1", "u2", "u3"} {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: u, Items: []ItemInput{one(bag, 1)}})
			if err != nil {
				t.Fatal(err)
			}
			sns = append(sns, o.OrderSn)
		}
		if f.inStock(t, f.ids[demo.BagCode]) {
			t.Fatal("the bag is listed in stock after its last unit was sold")
		}

		// Another goods' listing rows, held by a payment of it in flight.
		shirt := f.ids[demo.TShirtCode]
		held, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			done <- store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				if err := inventory.ListSold(ctx, tx, []inventory.RestoreLine{{ItemID: f.skuID(t, "黑色,L"), GoodsID: shirt, Num: 1}}); err != nil {
					return err
				}
				close(held)
				<-release
				return nil
			})
		}()
		<-held
		released := false
		defer func() {
			if !released {
				close(release)
				<-done
			}
		}()

		// A cancel, then the closer's claim of the other two.
		within := func(what string, fn func() error) {
			t.Helper()
			res := make(chan error, 1)
			go func() { res <- fn() }()
			select {
			case err := <-res:
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			case <-time.After(5 * time.Second):
				close(release)
				released = true
				<-done
				t.Fatalf("%s waited for the listing rows of another goods (released after 5 s: %v)", what, <-res)
			}
		}
		within("cancelOrder", func() error {
			_, err := f.svc.CancelOrder(ctx, "u1", false, sns[0])
			return err
		})
		if !f.inStock(t, f.ids[demo.BagCode]) {
			t.Error("the bag is not listed in stock after a cancel gave a unit back")
		}
		f.advance(f.svc.cfg.OrderTTL + time.Second)
		within("the timeout closer", func() error {
			n, err := f.svc.CloseExpired(ctx)
			if err == nil && n != 2 {
				t.Errorf("the closer closed %d orders, want 2", n)
			}
			return err
		})
		close(release)
		released = true
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := f.stock(t, bag); got != 3 || f.ledgerSum(t, bag, 0) != 3 {
			t.Errorf("bag: stock %d, ledger %d; want 3", got, f.ledgerSum(t, bag, 0))
		}
	})
}

// inStock reads whether the listing shows goods in stock (its scope-0 row).
func (f *fixture) inStock(t *testing.T, goods int64) bool {
	t.Helper()
	row, err := f.db.Client.GoodsListing.Query().Where(goodslisting.GoodsID(goods), goodslisting.Scope(0)).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return row.InStock
}
