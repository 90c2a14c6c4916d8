package cart

import (
	"context"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// A price raised after the buyer last read the cart is not charged:
// checkoutCart answers PRICE_CHANGED and the cart stays OPEN; the next read
// shows the new price with its warning and stores it as seen, so the next
// checkout charges it. A fall goes through unread. On the group path (one
// SKU) and the plain path (two).
func TestCheckoutRefusesUnseenPriceRise(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
	}{{"one SKU (group path)", []string{"黑色,L"}}, {"two SKUs (plain path)", []string{"黑色,L", "白色,M"}}} {
		t.Run(tc.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				var lines []LineInput
				var ids []int64
				for _, s := range tc.specs {
					id := f.tshirt(t, s)
					ids = append(ids, id)
					f.reprice(t, id, money.MustParse("99.00"))
					lines = append(lines, item(id, 1))
				}
				c := f.ok(f.svc.Create(ctx, "alice", lines))
				f.reprice(t, ids[0], money.MustParse("999.00"))
				_, err := f.svc.Checkout(ctx, "alice", c.ID, "")
				wantErr(t, err, checkout.ErrPriceChanged)
				if n := f.orders(t, "alice"); n != 0 {
					t.Fatalf("%d orders after PRICE_CHANGED, want 0", n)
				}
				r := f.read(t, "alice", c.ID)
				if r.Status != enums.CartOpen || len(r.Warnings) != 1 || r.Warnings[0].Code != WarnPriceChanged || r.Cost.Subtotal != money.MustParse("999.00")+money.Money(len(ids)-1)*money.MustParse("99.00") {
					t.Fatalf("the read after the refusal: %s, warnings %v, cost %s; want OPEN, PRICE_CHANGED once, at 999.00", r.Status, warnings(r), r.Cost.Subtotal)
				}
				if again := f.read(t, "alice", c.ID); len(again.Warnings) != 0 {
					t.Fatalf("the second read still warns: %v (the first showed the price)", warnings(again))
				}
				o, err := f.svc.Checkout(ctx, "alice", c.ID, "")
				if err != nil || o.Lines[0].UnitPrice != money.MustParse("999.00") && o.Lines[len(o.Lines)-1].UnitPrice != money.MustParse("999.00") {
					t.Fatalf("checkout after the read: %+v, %v; want the order at 999.00", o, err)
				}

				// A fall needs no read.
				c = f.ok(f.svc.Create(ctx, "alice", lines))
				f.reprice(t, ids[0], money.MustParse("9.00"))
				o, err = f.svc.Checkout(ctx, "alice", c.ID, "fall")
				if err != nil {
					t.Fatalf("checkout after a fall: %v", err)
				}
				want := money.MustParse("9.00") + money.Money(len(ids)-1)*money.MustParse("99.00")
				if o.Amount != want {
					t.Fatalf("amount %s after a fall, want %s", o.Amount, want)
				}
			})
		})
	}
}
