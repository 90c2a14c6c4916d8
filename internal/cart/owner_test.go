package cart

import (
	"context"
	"maps"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// A customer's cart is nobody else's: another customer and an anonymous
// caller with its id get null on reads and NOT_FOUND on every change. An
// anonymous cart is anyone's who has its id.
func TestOwnership(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.tshirt(t, "黑色,L")
		mine := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(id, 1)}))
		if len(mine.ID) != 32 {
			t.Fatalf("cart id %q: want 32 hex characters (128 bits)", mine.ID)
		}
		for _, who := range []string{"", "bob"} {
			if c := f.read(t, who, mine.ID); c != nil {
				t.Fatalf("%q reads alice's cart", who)
			}
			_, err := f.svc.AddLines(ctx, who, mine.ID, []LineInput{item(id, 1)})
			wantErr(t, err, errs.NotFound)
			_, err = f.svc.UpdateLines(ctx, who, mine.ID, []LineUpdate{{mine.Lines[0].ID, 5}})
			wantErr(t, err, errs.NotFound)
			_, err = f.svc.RemoveLines(ctx, who, mine.ID, []int64{mine.Lines[0].ID})
			wantErr(t, err, errs.NotFound)
			if who != "" {
				_, err = f.svc.Attach(ctx, who, mine.ID)
				wantErr(t, err, errs.NotFound)
				_, err = f.svc.Checkout(ctx, who, mine.ID, "")
				wantErr(t, err, errs.NotFound)
			}
		}
		if got := quantities(f.read(t, "alice", mine.ID)); !maps.Equal(got, map[int64]int64{id: 1}) {
			t.Fatalf("alice's cart changed: %v", got)
		}
		anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(id, 1)}))
		for _, who := range []string{"", "bob"} {
			if c := f.read(t, who, anon.ID); c == nil {
				t.Fatalf("%q cannot read an anonymous cart by its id", who)
			}
		}
		// Ids that are not a token are unknown, without a query.
		for _, bad := range []string{"", "1", mine.ID + "0", "ZZ" + mine.ID[2:]} {
			if c := f.read(t, "alice", bad); c != nil {
				t.Fatalf("id %q found a cart", bad)
			}
		}
		// Checkout wants the cart attached first.
		_, err := f.svc.Checkout(ctx, "bob", anon.ID, "")
		wantErr(t, err, errs.Forbidden)
	})
}

// Signing in attaches the anonymous cart; the customer's other open cart
// merges into it (quantities added, held at the maximum) and is gone; a
// customer has one open cart, which cartCreate fills.
func TestAttachMerges(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		x, y, z := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M"), f.tshirt(t, "藏青,S")
		max := f.co.Config().MaxQuantity
		old := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(x, 3), item(y, max-1)}))
		again := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(z, 1)}))
		if again.ID != old.ID {
			t.Fatal("a second cartCreate of alice made a second open cart")
		}
		anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(x, 2), item(y, 5)}))
		got := f.ok(f.svc.Attach(ctx, "alice", anon.ID))
		if got.ID != anon.ID || got.Owner() != "alice" {
			t.Fatalf("attach answered cart %s of %q", got.ID, got.Owner())
		}
		if q := quantities(got); !maps.Equal(q, map[int64]int64{x: 5, y: max, z: 1}) {
			t.Fatalf("merged %v, want {%d: 5, %d: %d, %d: 1}", q, x, y, max, z)
		}
		if c := f.read(t, "alice", old.ID); c != nil {
			t.Fatal("the merged cart is still there")
		}
		if n, _ := f.db.Client.Cart.Query().Count(ctx); n != 1 {
			t.Fatalf("%d carts, want 1", n)
		}
		if c := f.read(t, "", anon.ID); c != nil {
			t.Fatal("the attached cart is still anonymous")
		}
		// Attaching again changes nothing; cartCreate now fills this cart.
		f.ok(f.svc.Attach(ctx, "alice", anon.ID))
		if c := f.ok(f.svc.Create(ctx, "alice", nil)); c.ID != anon.ID {
			t.Fatal("alice's open cart is not the attached one")
		}
		// A second visitor cart merges into the first one's place.
		next := f.ok(f.svc.Create(ctx, "", []LineInput{item(z, 2)}))
		got = f.ok(f.svc.Attach(ctx, "alice", next.ID))
		if q := quantities(got); !maps.Equal(q, map[int64]int64{x: 5, y: max, z: 3}) {
			t.Fatalf("second merge %v", q)
		}
		_, err := f.svc.Attach(ctx, "", next.ID)
		wantErr(t, err, errs.Unauthenticated)
	})
}
