package cart

import (
	"context"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// Attaching a cart while the customer's other open cart is checking out (a
// key set, Place running) neither waits for that checkout nor answers
// IDEMPOTENCY_IN_PROGRESS (issue 25, MariaDB), and never drops the cart
// being checked out: it is not merged, keeps its lines, and completes with
// its order (or, refused, stays OPEN and the customer's); the attached
// cart becomes the customer's open cart with its own lines only.
func TestAttachWhileOtherCartChecksOut(t *testing.T) {
	for _, refused := range []bool{false, true} {
		name := "checkout places the order"
		if refused {
			name = "checkout refused"
		}
		t.Run(name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				x, y := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M")
				busy := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(x, 1)}))
				entered, release := make(chan struct{}), make(chan struct{})
				f.svc.placeOrder = func(ctx context.Context, in checkout.PlaceInput) (*checkout.Order, error) {
					close(entered)
					<-release
					return f.co.Place(ctx, in)
				}
				type result struct {
					o   *checkout.Order
					err error
				}
				done := make(chan result, 1)
				go func() {
					o, err := f.svc.Checkout(ctx, "alice", busy.ID, "")
					done <- result{o, err}
				}()
				<-entered
				anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(y, 2)}))
				c, err := f.svc.Attach(ctx, "alice", anon.ID)
				if err != nil {
					close(release)
					t.Fatalf("attaching while the other cart checks out: %v", err)
				}
				if q := quantities(c); len(q) != 1 || q[y] != 2 || c.Owner() != "alice" {
					t.Errorf("the attached cart: %v, want only its own 2 of %d", q, y)
				}
				if refused {
					f.setStock(t, x, 0)
				}
				close(release)
				r := <-done
				kept := f.read(t, "alice", busy.ID)
				if kept == nil {
					t.Fatal("the cart being checked out was dropped by the attach")
				}
				if q := quantities(kept); len(q) != 1 || q[x] != 1 {
					t.Errorf("the cart checked out has %v, want its 1 of %d", q, x)
				}
				if refused {
					wantErr(t, r.err, checkout.ErrOutOfStock)
					if kept.Status != enums.CartOpen {
						t.Errorf("the refused cart is %s, want OPEN", kept.Status)
					}
				} else if r.err != nil || kept.Status != enums.CartCompleted || kept.OrderSn() != r.o.OrderSn {
					t.Errorf("the checkout: %v, %v; cart %s with %q; want COMPLETED with its order", r.o, r.err, kept.Status, kept.OrderSn())
				}
				if open := f.ok(f.svc.Create(ctx, "alice", nil)); open.ID != anon.ID {
					t.Errorf("alice's open cart is %s, want the attached %s", open.ID, anon.ID)
				}
			})
		})
	}
}
