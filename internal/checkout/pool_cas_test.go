package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A pool that stops selling between an order's resolve (which saw it on
// sale) and its CAS is refused by the CAS itself with POOL_NOT_ACTIVE, and
// nothing is taken (issue 25, section 7: resolve refused first in every
// other test). From the plain path's "resolved" hook: closed through the
// real API on another connection, or the clock past its endsAt.
func TestPoolStopsBetweenResolveAndCAS(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(f *fixture, t *testing.T, pool *inventory.Pool)
	}{
		{"closed", func(f *fixture, t *testing.T, p *inventory.Pool) {
			if _, err := inventory.New(f.db).ClosePool(context.Background(), p.ID); err != nil {
				t.Error(err)
			}
		}},
		{"ended", func(f *fixture, t *testing.T, p *inventory.Pool) { f.advance(2 * time.Hour) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db, path{"plain", false})
				id := f.skuID(t, "黑色,L")
				f.ledgerStock(t, id, 10)
				p := f.newPool(t, id, 3, 2, -time.Minute)
				before := f.counts(t)
				once := true
				f.svc.hook = func(stage string) error {
					if stage == "resolved" && once {
						once = false
						tc.stop(f, t, p)
					}
					return nil
				}
				_, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 1)}})
				f.svc.hook = nil
				if once {
					t.Fatal("the order never reached its resolved stage")
				}
				if !errors.Is(err, inventory.ErrPoolNotActive) {
					t.Fatalf("ordering from a pool that stopped after the resolve: %v, want POOL_NOT_ACTIVE", err)
				}
				after := f.counts(t)
				if after["orders"] != before["orders"] || after["order_line"] != before["order_line"] {
					t.Errorf("tables after the refusal %v, before %v: want no order", after, before)
				}
				if got, err := inventory.New(db).Pool(ctx, p.ID); err != nil || got.Sold != 0 || got.LockedStock != 0 {
					t.Errorf("pool after the refusal: %+v, %v; want nothing sold or locked", got, err)
				}
				f.poolsBalance(t)
			})
		})
	}
}
