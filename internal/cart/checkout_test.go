package cart

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// 50 concurrent checkouts of one cart place one order: every one that
// succeeds answers it, the others IDEMPOTENCY_IN_PROGRESS; the stock moved
// once; the cart is COMPLETED with that order, a retry (with or without a
// key) answers it again, and changes are refused with CART_COMPLETED. A
// one-SKU cart goes through the group-commit path, a two-SKU one through
// the plain path.
func TestCheckoutConcurrentOneOrder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		specs []string
	}{{"one SKU (group path)", []string{"黑色,L"}}, {"two SKUs (plain path)", []string{"黑色,L", "白色,M"}}} {
		t.Run(tc.name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				// 50 checkouts in flight over at most 16 connections, as a
				// server's pool would carry them; the default pool of 64 per
				// test can exhaust a shared MariaDB's 151 connections when
				// other packages' tests run at the same time.
				db.SQL.SetMaxOpenConns(16)
				f := setup(t, db)
				var lines []LineInput
				before := map[int64]int64{}
				for _, s := range tc.specs {
					id := f.tshirt(t, s)
					lines = append(lines, item(id, 2))
					before[id] = f.stock(t, id)
				}
				c := f.ok(f.svc.Create(ctx, "alice", lines))
				const n = 50
				var wg sync.WaitGroup
				got := make([]*checkout.Order, n)
				errs := make([]error, n)
				start := make(chan struct{})
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						key := ""
						if i%2 == 1 {
							key = "client-key-" + string(rune('a'+i%26)) + string(rune('a'+i/26)) // different keys must not make more orders
						}
						got[i], errs[i] = f.svc.Checkout(ctx, "alice", c.ID, key)
					}()
				}
				close(start)
				wg.Wait()
				sn, ok := "", 0
				for i := range n {
					switch {
					case errs[i] == nil:
						if sn != "" && got[i].OrderSn != sn {
							t.Fatalf("two orders: %s and %s", sn, got[i].OrderSn)
						}
						sn = got[i].OrderSn
						ok++
					case !errors.Is(errs[i], checkout.ErrIdempotencyInProgress):
						t.Fatalf("checkout %d: %v", i, errs[i])
					}
				}
				if ok == 0 {
					t.Fatal("no checkout succeeded")
				}
				t.Logf("%d of %d checkouts answered the order, the others IDEMPOTENCY_IN_PROGRESS", ok, n)
				if o := f.orders(t, "alice"); o != 1 {
					t.Fatalf("%d orders, want 1", o)
				}
				for id, was := range before {
					if s := f.stock(t, id); s != was-2 {
						t.Fatalf("SKU %d stock %d, want %d", id, s, was-2)
					}
				}
				done := f.read(t, "alice", c.ID)
				if done.Status != enums.CartCompleted || done.OrderSn() != sn || len(done.Warnings) != 0 {
					t.Fatalf("cart %s order %q (want %s), warnings %v", done.Status, done.OrderSn(), sn, warnings(done))
				}
				for _, key := range []string{"", "another-key"} {
					o, err := f.svc.Checkout(ctx, "alice", c.ID, key)
					if err != nil || o.OrderSn != sn {
						t.Fatalf("retry with key %q: %v, %v; want order %s", key, o, err, sn)
					}
				}
				_, err := f.svc.AddLines(ctx, "alice", c.ID, lines)
				wantErr(t, err, ErrCompleted)
				_, err = f.svc.RemoveLines(ctx, "alice", c.ID, []int64{done.Lines[0].ID})
				wantErr(t, err, ErrCompleted)
				_, err = f.svc.Attach(ctx, "alice", c.ID)
				wantErr(t, err, ErrCompleted)
				// The customer's next cart is a new one.
				if next := f.ok(f.svc.Create(ctx, "alice", nil)); next.ID == c.ID {
					t.Fatal("cartCreate after checkout answered the completed cart")
				}
			})
		})
	}
}

// A refused order (OUT_OF_STOCK, SKU_UNAVAILABLE) leaves the cart OPEN and
// as it was, free for changes and a later checkout; a client key used for
// another input is IDEMPOTENCY_KEY_REUSED, as on placeOrder.
func TestCheckoutRefusedLeavesCartOpen(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		hot, short := f.tshirt(t, "黑色,L"), f.tshirt(t, "藏青,XL") // 5 left
		c := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(hot, 1), item(short, 6)}))
		same := func() {
			t.Helper()
			r := f.read(t, "alice", c.ID)
			if r.Status != enums.CartOpen || !maps.Equal(quantities(r), quantities(c)) || !r.UpdatedAt.Equal(c.UpdatedAt) {
				t.Fatalf("cart after a refused checkout: %s %v at %v, want OPEN %v at %v", r.Status, quantities(r), r.UpdatedAt, quantities(c), c.UpdatedAt)
			}
		}
		_, err := f.svc.Checkout(ctx, "alice", c.ID, "")
		wantErr(t, err, checkout.ErrOutOfStock)
		same()
		f.disable(t, hot)
		_, err = f.svc.Checkout(ctx, "alice", c.ID, "k1")
		wantErr(t, err, checkout.ErrSkuUnavailable)
		same()
		if n := f.orders(t, "alice"); n != 0 {
			t.Fatalf("%d orders", n)
		}
		// Changes are allowed again: the refused attempts gave the cart back.
		var line = map[int64]int64{}
		for _, l := range c.Lines {
			line[l.ItemID] = l.ID
		}
		c = f.ok(f.svc.UpdateLines(ctx, "alice", c.ID, []LineUpdate{{line[hot], 0}, {line[short], 5}}))
		// k2 is taken by an order of other items.
		black := f.tshirt(t, "黑色,M")
		if _, err := f.co.Place(ctx, checkout.PlaceInput{UserID: "alice", IdempotencyKey: "k2", Items: []checkout.ItemInput{{ItemID: &black, Quantity: 1}}}); err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.Checkout(ctx, "alice", c.ID, "k2")
		wantErr(t, err, checkout.ErrIdempotencyKeyReused)
		same()
		o, err := f.svc.Checkout(ctx, "alice", c.ID, "k1")
		if err != nil {
			t.Fatal(err)
		}
		if len(o.Lines) != 1 || o.Lines[0].ItemID != short || o.Lines[0].Quantity != 5 {
			t.Fatalf("order lines %+v", o.Lines[0])
		}
		if f.stock(t, short) != 0 {
			t.Fatalf("stock %d, want 0", f.stock(t, short))
		}
	})
}

// A checkout that ended without knowing whether it placed the order keeps
// its key: the cart refuses changes, and the next checkout replays that
// order instead of placing another.
func TestCheckoutUnknownOutcomeReplays(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.tshirt(t, "黑色,L")
		c := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(id, 1)}))
		// The attempt placed its order, then its completion never came (as if
		// the process died there): the key is set, the lease ran out.
		r, err := f.db.Client.Cart.Query().Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		key := "cart:" + c.ID + ":1"
		if err := f.db.Client.Cart.UpdateOneID(r.ID).SetCheckoutKey(key).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		placed, err := f.co.Place(ctx, checkout.PlaceInput{UserID: "alice", IdempotencyKey: key, Items: []checkout.ItemInput{{ItemID: &id, Quantity: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.svc.AddLines(ctx, "alice", c.ID, []LineInput{item(id, 1)})
		wantErr(t, err, checkout.ErrIdempotencyInProgress)
		o, err := f.svc.Checkout(ctx, "alice", c.ID, "a-new-key")
		if err != nil || o.OrderSn != placed.OrderSn {
			t.Fatalf("checkout after the lost completion: %v, %v; want order %s", o, err, placed.OrderSn)
		}
		if n := f.orders(t, "alice"); n != 1 {
			t.Fatalf("%d orders, want 1", n)
		}
		if r := f.read(t, "alice", c.ID); r.Status != enums.CartCompleted {
			t.Fatalf("cart %s", r.Status)
		}
	})
}
