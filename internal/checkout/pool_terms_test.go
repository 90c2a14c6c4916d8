package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A SKU disabled by an admin between a pool order's resolve (which saw it
// enabled) and its take is not sold from its pool: the pool's CAS checks
// only the pool, so the take checks the SKU's status, spec text and goods
// under the goods lock it holds (no edit commits meanwhile), and the order
// is decided again from a fresh read: SKU_UNAVAILABLE, nothing taken.
func TestPoolSaleOfSkuDisabledAfterResolve(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		cat := catalog.New(db, catalog.DefaultConfig())
		defer cat.Close()
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 10)
		p := f.newPool(t, id, 3, 2, -time.Minute)
		before := f.counts(t)
		once := true
		f.svc.hook = func(stage string) error {
			if stage == "resolved" && once {
				once = false
				cur, err := db.Client.Sku.Get(ctx, id)
				if err != nil {
					return err
				}
				off := enums.SkuDisabled
				if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: cur.Version, Status: &off}); err != nil {
					t.Error(err)
				}
			}
			return nil
		}
		_, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 1)}})
		f.svc.hook = nil
		if once {
			t.Fatal("the order never reached its resolved stage")
		}
		if !errors.Is(err, ErrSkuUnavailable) {
			t.Fatalf("ordering from the pool of a SKU disabled after the resolve: %v, want SKU_UNAVAILABLE", err)
		}
		after := f.counts(t)
		if after["orders"] != before["orders"] || after["order_line"] != before["order_line"] {
			t.Errorf("tables after the refusal %v, before %v: want no order", after, before)
		}
		if got, err := inventory.New(db).Pool(ctx, p.ID); err != nil || got.Sold != 0 || got.LockedStock != 0 || got.Stock != 3 {
			t.Errorf("pool after the refusal: %+v, %v; want 3 in stock, nothing sold or locked", got, err)
		}
		f.poolsBalance(t)
	})
}
