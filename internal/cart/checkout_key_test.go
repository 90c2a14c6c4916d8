package cart

import (
	"context"
	"fmt"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A client key is one cart's: another cart with the same items and the
// same key is IDEMPOTENCY_KEY_REUSED and stays OPEN (issue 25: it
// completed with the first cart's order), as is a key placeOrder used.
func TestCheckoutKeyIsPerCart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.tshirt(t, "黑色,L")
		first := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(id, 1)}))
		o1, err := f.svc.Checkout(ctx, "alice", first.ID, "K")
		if err != nil {
			t.Fatal(err)
		}
		second := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(id, 1)}))
		if second.ID == first.ID {
			t.Fatal("the completed cart was answered as the open one")
		}
		_, err = f.svc.Checkout(ctx, "alice", second.ID, "K")
		wantErr(t, err, checkout.ErrIdempotencyKeyReused)
		if c := f.read(t, "alice", second.ID); c.Status != enums.CartOpen || c.OrderSn() != "" {
			t.Fatalf("the second cart after a reused key: %s with order %q, want OPEN without one (the first's is %s)", c.Status, c.OrderSn(), o1.OrderSn)
		}
		if _, err := f.co.Place(ctx, checkout.PlaceInput{UserID: "alice", IdempotencyKey: "P", Items: []checkout.ItemInput{{ItemID: &id, Quantity: 1}}}); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.Checkout(ctx, "alice", second.ID, "P")
		wantErr(t, err, checkout.ErrIdempotencyKeyReused)
		o2, err := f.svc.Checkout(ctx, "alice", second.ID, "K2")
		if err != nil || o2.OrderSn == o1.OrderSn {
			t.Fatalf("the second cart with a key of its own: %v, %v; want a new order", o2, err)
		}
		if n := f.orders(t, "alice"); n != 3 {
			t.Fatalf("%d orders, want 3 (two carts and one placeOrder)", n)
		}
		// The first cart's own retry with its key still answers its order.
		if o, err := f.svc.Checkout(ctx, "alice", first.ID, "K"); err != nil || o.OrderSn != o1.OrderSn {
			t.Fatalf("the first cart again: %v, %v; want %s", o, err, o1.OrderSn)
		}
	})
}

// A checkout whose Place ends without telling whether it placed the order
// (UNAVAILABLE: the answer lost after COMMIT; a deadline) keeps the cart's
// key: changes are refused, and the retry, with another key, replays that
// one order instead of placing a second (issue 25, section 7).
func TestCheckoutAmbiguousFailureKeepsKey(t *testing.T) {
	for _, lost := range []error{store.ErrUnavailable, context.DeadlineExceeded} {
		t.Run(fmt.Sprint(lost), func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				id := f.tshirt(t, "黑色,L")
				before := f.stock(t, id)
				c := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(id, 1)}))
				var placed *checkout.Order
				f.svc.placeOrder = func(ctx context.Context, in checkout.PlaceInput) (*checkout.Order, error) {
					o, err := f.co.Place(ctx, in)
					if err != nil {
						t.Fatalf("the first Place: %v", err)
					}
					placed = o
					return nil, fmt.Errorf("reading the answer: %w", lost)
				}
				_, err := f.svc.Checkout(ctx, "alice", c.ID, "first-key")
				wantErr(t, err, lost)
				f.svc.placeOrder = f.co.Place
				_, err = f.svc.AddLines(ctx, "alice", c.ID, []LineInput{item(id, 1)})
				wantErr(t, err, checkout.ErrIdempotencyInProgress)
				if r := f.read(t, "alice", c.ID); r.Status != enums.CartOpen {
					t.Fatalf("cart %s after the lost answer, want OPEN", r.Status)
				}
				o, err := f.svc.Checkout(ctx, "alice", c.ID, "another-key")
				if err != nil || o.OrderSn != placed.OrderSn {
					t.Fatalf("the retry with another key: %v, %v; want the order placed, %s", o, err, placed.OrderSn)
				}
				if n := f.orders(t, "alice"); n != 1 {
					t.Fatalf("%d orders, want 1", n)
				}
				if s := f.stock(t, id); s != before-1 {
					t.Fatalf("stock %d, want %d", s, before-1)
				}
				if r := f.read(t, "alice", c.ID); r.Status != enums.CartCompleted || r.OrderSn() != placed.OrderSn {
					t.Fatalf("cart %s with %q, want COMPLETED with %s", r.Status, r.OrderSn(), placed.OrderSn)
				}
			})
		})
	}
}
