package cart

import (
	"context"
	"testing"
	"time"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A cart whose checkout was refused, then changed, checks out its new lines
// with no key given (issue 38): the cart's own key names its version
// ("cart:ID:V"), so the changed cart is a new request, never the refused
// one again. That matters when the refused attempt's key outlives it:
// checkout gives a refused key back before answering, but a request at its
// deadline, or a database that does not answer the delete in time, leaves
// the claim until its lease runs out (checkout.Service.release). With the
// version out of the key the changed cart meets that claim, and answers
// IDEMPOTENCY_KEY_REUSED (another request's key) for its new lines.
func TestCheckoutAfterRefusalAndChangeNoKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
	}{{"one SKU (group path)", []string{"藏青,XL"}}, {"two SKUs (plain path)", []string{"藏青,XL", "黑色,L"}}} {
		for _, lost := range []bool{false, true} {
			name := tc.name + ", key given back"
			if lost {
				name = tc.name + ", key left claimed"
			}
			t.Run(name, func(t *testing.T) {
				testdb.Each(t, func(t *testing.T, db *store.DB) {
					ctx := context.Background()
					f := setup(t, db)
					var lines []LineInput
					for _, s := range tc.specs {
						lines = append(lines, item(f.tshirt(t, s), 6)) // 藏青,XL: 5 left
					}
					c := f.ok(f.svc.Create(ctx, "alice", lines))
					var refusedKey string
					f.svc.placeOrder = func(ctx context.Context, in checkout.PlaceInput) (*checkout.Order, error) {
						refusedKey = in.IdempotencyKey
						o, err := f.co.Place(ctx, in)
						if lost {
							// The claim as a release that did not land leaves it.
							now := time.Now().UTC()
							if err := f.db.Client.Idempotency.Create().SetUserID(in.UserID).SetKey(in.IdempotencyKey).
								SetRequestHash("the refused request").SetState("PENDING").SetLeaseUntil(now.Add(checkout.DefaultConfig().Lease)).
								SetCreatedAt(now).SetExpiresAt(now.Add(time.Hour)).Exec(ctx); err != nil {
								t.Fatalf("leaving the refused attempt's claim: %v", err)
							}
						}
						return o, err
					}
					_, err := f.svc.Checkout(ctx, "alice", c.ID, "")
					wantErr(t, err, checkout.ErrOutOfStock)
					f.svc.placeOrder = f.co.Place
					var upd []LineUpdate
					for _, l := range c.Lines {
						upd = append(upd, LineUpdate{l.ID, 1})
					}
					c = f.ok(f.svc.UpdateLines(ctx, "alice", c.ID, upd))
					o, err := f.svc.Checkout(ctx, "alice", c.ID, "")
					if err != nil {
						t.Fatalf("checkout of the changed cart, no key given (the refused one's was %q): %v", refusedKey, err)
					}
					if len(o.Lines) != len(tc.specs) {
						t.Fatalf("order lines %+v, want the changed cart's %d", o.Lines, len(tc.specs))
					}
					for _, l := range o.Lines {
						if l.Quantity != 1 {
							t.Fatalf("order line %+v, want the changed quantity 1", l)
						}
					}
					if r := f.read(t, "alice", c.ID); r.Status != enums.CartCompleted || r.OrderSn() != o.OrderSn {
						t.Fatalf("cart %s with %q, want COMPLETED with %s", r.Status, r.OrderSn(), o.OrderSn)
					}
					if n := f.orders(t, "alice"); n != 1 {
						t.Fatalf("%d orders, want 1", n)
					}
				})
			})
		}
	}
}
