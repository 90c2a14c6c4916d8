package cart

import (
	"context"
	"errors"
	"strings"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// A read or a change whose answer does not show the prices (no
// ShowingPrices on its context, as the resolver says for `cart(id) { id }`)
// acknowledges no rise: checkoutCart still answers PRICE_CHANGED. The read
// that shows them acknowledges, and the checkout then goes through (issue
// 25 review: `cart(id) { id }` let a 999.00 price through unseen).
func TestOnlyAReadShowingPricesAcknowledges(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		a, b := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M")
		c := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(a, 1)}))
		f.reprice(t, a, money.MustParse("999.00"))

		if r := f.ok(f.svc.Cart(ctx, "alice", c.ID)); len(r.Warnings) != 1 {
			t.Fatalf("the read unshown: warnings %v, want PRICE_CHANGED", warnings(r))
		}
		f.ok(f.svc.Cart(ShowingPrices(ctx, false), "alice", c.ID))
		f.ok(f.svc.AddLines(ctx, "alice", c.ID, []LineInput{item(b, 1)}))
		_, err := f.svc.Checkout(ctx, "alice", c.ID, "")
		wantErr(t, err, checkout.ErrPriceChanged)

		if r := f.read(t, "alice", c.ID); len(r.Warnings) != 1 || r.Warnings[0].Code != WarnPriceChanged {
			t.Fatalf("the read shown: warnings %v, want PRICE_CHANGED", warnings(r))
		}
		o, err := f.svc.Checkout(ctx, "alice", c.ID, "")
		if err != nil {
			t.Fatalf("checkout after the read that showed the rise: %v", err)
		}
		if want := money.MustParse("999.00") + f.price(t, b); o.Amount != want {
			t.Fatalf("amount %s, want %s", o.Amount, want)
		}
	})
}

// A customer's empty cart id names their open cart once they have one:
// cartLinesAdd already answered it; the read and the line changes of the id
// now answer and change it too (issue 25 review: cart(E1) read an empty
// OPEN cart while cartLinesAdd(E1) answered K1). An anonymous empty id is
// no one's cart but its own.
func TestCustomerEmptyIDIsTheirOpenCart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		a, b := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,M")
		e1 := f.ok(f.svc.Create(ctx, "alice", nil)).ID
		anon := f.ok(f.svc.Create(ctx, "", nil)).ID
		k1 := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(a, 2)}))
		if k1.ID == e1 {
			t.Fatal("the cart with lines took the empty cart's id")
		}
		r := f.read(t, "alice", e1)
		if r == nil || r.ID != k1.ID || quantities(r)[a] != 2 {
			t.Fatalf("cart(E1) after cartCreate with lines: %+v, want cart %s with its line", r, k1.ID)
		}
		if added := f.ok(f.svc.AddLines(ctx, "alice", e1, []LineInput{item(b, 1)})); added.ID != k1.ID {
			t.Fatalf("cartLinesAdd(E1) answered %s, want %s", added.ID, k1.ID)
		}
		r = f.read(t, "alice", e1)
		if r.ID != k1.ID || len(r.Lines) != 2 {
			t.Fatalf("cart(E1) after cartLinesAdd(E1): %+v", r)
		}
		u := f.ok(f.svc.UpdateLines(ctx, "alice", e1, []LineUpdate{{r.Lines[0].ID, 5}}))
		if u.ID != k1.ID || quantities(u)[a] != 5 {
			t.Fatalf("cartLinesUpdate(E1): %+v, want cart %s with 5", u, k1.ID)
		}
		if rm := f.ok(f.svc.RemoveLines(ctx, "alice", e1, []int64{r.Lines[1].ID})); rm.ID != k1.ID || len(rm.Lines) != 1 {
			t.Fatalf("cartLinesRemove(E1): %+v", rm)
		}
		if r := f.read(t, "bob", e1); r != nil {
			t.Fatalf("bob reads alice's E1: %+v", r)
		}
		if o, err := f.svc.Checkout(ctx, "alice", e1, ""); err != nil || len(o.Lines) != 1 || o.Lines[0].Quantity != 5 {
			t.Fatalf("checkoutCart(E1): %+v, %v; want cart %s's order of 5", o, err, k1.ID)
		}
		if k := f.read(t, "alice", k1.ID); k.Status != enums.CartCompleted {
			t.Fatalf("cart %s after checkoutCart(E1): %s, want COMPLETED", k1.ID, k.Status)
		}
		// Completed, it is no longer the open cart: E1 is empty again.
		if r := f.read(t, "alice", e1); r == nil || r.ID != e1 || len(r.Lines) != 0 {
			t.Fatalf("cart(E1) once the open cart is an order: %+v, want the empty cart E1", r)
		}
		_, err := f.svc.Checkout(ctx, "alice", e1, "")
		wantErr(t, err, errs.InvalidInput)
		if r := f.read(t, "alice", anon); r == nil || r.ID != anon || len(r.Lines) != 0 {
			t.Fatalf("an anonymous empty id read by alice: %+v, want that empty cart", r)
		}
	})
}

// Changing lines of an empty cart not stored answers what a stored cart
// without the line answers: NOT_FOUND "no line", not "no such cart" (the
// id reads as an OPEN cart). An id the server did not make is still "no
// such cart".
func TestLineChangeOfAnEmptyCartIsNoLine(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		stored := f.ok(f.svc.Create(ctx, "", []LineInput{item(f.tshirt(t, "黑色,L"), 1)}))
		_, want := f.svc.UpdateLines(ctx, "", stored.ID, []LineUpdate{{987654, 1}})
		wantErr(t, want, errs.NotFound)
		for _, who := range []string{"", "alice"} {
			e := f.ok(f.svc.Create(ctx, who, nil)).ID
			_, upd := f.svc.UpdateLines(ctx, who, e, []LineUpdate{{987654, 1}})
			_, rm := f.svc.RemoveLines(ctx, who, e, []int64{987654})
			for _, err := range []error{upd, rm} {
				if !errors.Is(err, errs.NotFound) || err.Error() != want.Error() {
					t.Errorf("%q changing a line of an empty cart: %v, want %v", who, err, want)
				}
			}
			if c, _ := f.rows(t); c != 1 {
				t.Errorf("%d carts stored, want the one with lines only", c)
			}
		}
		_, err := f.svc.UpdateLines(ctx, "", "0123456789abcdef0123456789abcdef", []LineUpdate{{987654, 1}})
		if !errors.Is(err, errGone) || !strings.Contains(err.Error(), "no such cart") {
			t.Errorf("an id the server did not make: %v, want no such cart", err)
		}
	})
}

func (f *fixture) price(t *testing.T, id int64) money.Money {
	t.Helper()
	k, err := f.db.Client.Sku.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return k.SellPrice
}

// An empty cart's id once stored is a stored cart's: after its first line
// and cartBuyerIdentityUpdate by alice it is alice's only, and for anyone
// else it is an unknown id (null, NOT_FOUND "no such cart"), not the empty
// anonymous cart its signature once vouched for. (Found with the review's
// fixes: the read answered an empty OPEN cart, cartLinesAdd and
// cartBuyerIdentityUpdate tried to store it three times and answered
// UNAVAILABLE, checkoutCart FORBIDDEN.)
func TestStoredEmptyIDIsNoLongerAnEmptyCart(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		a := f.tshirt(t, "黑色,L")
		e := f.ok(f.svc.Create(ctx, "", nil)).ID
		f.ok(f.svc.AddLines(ctx, "", e, []LineInput{item(a, 1)}))
		f.ok(f.svc.Attach(ctx, "alice", e))
		if r := f.read(t, "alice", e); r == nil || len(r.Lines) != 1 {
			t.Fatalf("alice reads her cart: %+v", r)
		}
		for _, who := range []string{"", "bob"} {
			if r := f.read(t, who, e); r != nil {
				t.Errorf("%q reads alice's cart: %+v, want null", who, r)
			}
			_, add := f.svc.AddLines(ctx, who, e, []LineInput{item(a, 1)})
			_, upd := f.svc.UpdateLines(ctx, who, e, []LineUpdate{{987654, 1}})
			_, rm := f.svc.RemoveLines(ctx, who, e, []int64{987654})
			errs := []error{add, upd, rm}
			if who != "" {
				_, at := f.svc.Attach(ctx, who, e)
				_, co := f.svc.Checkout(ctx, who, e, "")
				errs = append(errs, at, co)
			}
			for i, err := range errs {
				if !errors.Is(err, errGone) {
					t.Errorf("%q, change %d of alice's cart: %v, want no such cart", who, i, err)
				}
			}
		}
		if r := f.read(t, "alice", e); r == nil || quantities(r)[a] != 1 || r.Status != "OPEN" {
			t.Fatalf("alice's cart after the others' tries: %+v", r)
		}
	})
}
