package checkout

import (
	"context"
	"fmt"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Issue 27's oversell: stock 200, 1000 buyers, 64 at a time, on both paths,
// through two instances (each its own pools and its own group path, as two
// servers of one shop) on each server backend: exactly 200 orders, the
// ledger balanced, and reconciliation clean. On the group path the two
// instances' batches race each other on the SKU row, so every batch that
// decided from a read (or lastRead's memory) another instance made stale
// must be caught by its check under the lock.
func TestHotSKUTwoInstancesNeverOversell(t *testing.T) {
	for _, p := range []path{{"plain", false}, {"group", true}} {
		t.Run(p.name, func(t *testing.T) {
			for _, b := range testdb.Servers {
				t.Run(string(b), func(t *testing.T) {
					f, svcs := instances(t, b, p, 2)
					db := f.db
					id := f.skuID(t, "黑色,L")
					got := sell(1000, func(i int) error {
						_, err := svcs[i%2].Place(context.Background(), PlaceInput{UserID: fmt.Sprint("buyer-", i), Items: []ItemInput{one(id, 1)}})
						return err
					})
					if got.other.Load() > 0 {
						t.Fatalf("%d orders failed with something other than OUT_OF_STOCK, first: %v", got.other.Load(), got.first.Load())
					}
					ok, oos := &got.ok, &got.outOfStock
					if ok.Load() != 200 || oos.Load() != 800 {
						t.Errorf("placed %d, out of stock %d; want 200 and 800", ok.Load(), oos.Load())
					}
					if got := f.count(t, "orders"); got != 200 {
						t.Errorf("orders = %d, want 200", got)
					}
					if got, led := f.stock(t, id), f.ledgerSum(t, id, 0); got != 0 || led != 0 {
						t.Errorf("stock = %d, ledger balance = %d; want 0, 0", got, led)
					}
					if p.group {
						for i, s := range svcs {
							if b, n := s.GroupStats(); b == 0 || n == 0 {
								t.Errorf("instance %d ran %d batches of %d orders: the group path was not taken", i, b, n)
							}
						}
					}
					f.clean(t, "after the sale")
					links(t, db)
				})
			}
		})
	}
}

// A batch of one order writes an ordinary event whose aggregate is the
// order's id, found by its number in the same round trip: the whole id, on
// every backend (on PostgreSQL a CAST … AS CHAR kept one character: order
// 12's event named order 1).
func TestGroupLoneOrderEventNamesItsOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		for i := range 12 {
			if _, err := f.svc.Place(context.Background(), PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(id, 1)}}); err != nil {
				t.Fatal(err)
			}
		}
		if b, n := f.svc.GroupStats(); b != 12 || n != 12 {
			t.Fatalf("GroupStats = %d batches, %d orders; want 12 batches of one", b, n)
		}
		links(t, db)
	})
}
