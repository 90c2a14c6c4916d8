package aftersale_test

import (
	"testing"
	"time"

	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A flash sale's accounts through shipping and after-sales: a pool's
// orders shipped still stand, a return while the pool sells goes back to
// the pool, one after the pool's return goes to main stock, a refund the
// buyer keeps the goods of gives nothing back. After each step every pool
// balances (inventory.ReconcilePools), every SKU matches its ledger, and
// the pool's sold count is what left it and did not come back.
func TestPoolAccountsThroughShippingAndAfterSales(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		inv := inventory.New(db)
		item := f.items[0]
		now := time.Now()
		p, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: item, Name: "秒杀", Price: 990, Quantity: 6, PerBuyerLimit: 5,
			StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		check := func(sold int64, when string) {
			t.Helper()
			if got, err := inv.Pool(ctx, p.ID); err != nil || got.Sold != sold {
				t.Errorf("%s: pool %+v (%v), want sold %d", when, got, err, sold)
			}
			if diffs, err := inv.ReconcilePools(ctx, false); err != nil || len(diffs) != 0 {
				t.Errorf("%s: pools that do not balance: %+v (%v)", when, diffs, err)
			}
			f.clean(t)
		}
		buy := func(user string) *checkout.Order {
			t.Helper()
			o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: user, Items: []checkout.ItemInput{{ItemID: &item, PoolID: &p.ID, Quantity: 2}}})
			if err != nil {
				t.Fatal(err)
			}
			o = f.pays(t, o)
			f.shipAll(t, o)
			return o
		}
		sendBack := func(o *checkout.Order) {
			t.Helper()
			a := f.request(t, o, enums.AfterSaleReturnAndRefund, as.LineInput{ItemID: item, Quantity: 1})
			if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
				t.Fatal(err)
			}
			if _, err := f.as.ReturnShipped(ctx, as.Actor{ID: o.UserID}, a.Sn, "SF", "SF1"); err != nil {
				t.Fatal(err)
			}
			if _, err := f.as.ReceiveReturn(ctx, admin, a.Sn); err != nil {
				t.Fatal(err)
			}
		}

		o1 := buy("buyer-1")
		check(2, "an order of 2 shipped")
		sendBack(o1)
		if got, _ := inv.Pool(ctx, p.ID); got.Stock != 5 {
			t.Errorf("after a return while the pool sells: pool stock %d, want 5 (6 - 2 + 1)", got.Stock)
		}
		check(1, "1 of them returned to the pool")
		o2 := buy("buyer-2")
		check(3, "another order of 2 shipped")
		mainBefore := f.stock(t, item)
		if _, err := inv.ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		check(3, "the pool returned")
		sendBack(o2)
		if got := f.stock(t, item); got != mainBefore+3+1 {
			t.Errorf("main stock %d, want %d (the pool's 3 left and the unit returned after it)", got, mainBefore+3+1)
		}
		check(2, "1 unit returned after the pool's return")
		// The buyer keeps o1's other unit and is refunded: nothing comes back.
		a := f.request(t, o1, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 1})
		if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, o1.OrderSn); got.Status != enums.OrderRefunded {
			t.Errorf("order 1 %s, want REFUNDED", got.Status)
		}
		check(2, "a refund of a unit the buyer keeps, the order REFUNDED")
	})
}
