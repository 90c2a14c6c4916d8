package e2e

import (
	"context"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Issue 25 through the binary: cartCreate without lines stores nothing but
// hands out an id that reads as an empty cart (signed with serve's key) and
// is stored by its first line; a price raised after the buyer's last read is
// PRICE_CHANGED at checkoutCart, and the next read shows and acknowledges it.
func TestCartEmptyAndPriceChangedOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			db, err := store.Open(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			carts := func() int {
				t.Helper()
				n, err := db.Client.Cart.Query().Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			blackL, _ := tshirtSku(t, s, "黑色,L")
			var created struct{ CartCreate cartJSON }
			decode(t, s.Query(t, "", `mutation { cartCreate { `+cartFields+` } }`, nil), &created)
			id := created.CartCreate.ID
			if n := carts(); n != 0 || id == "" || created.CartCreate.Status != "OPEN" {
				t.Fatalf("cartCreate without lines: %+v and %d carts stored, want an id and none", created.CartCreate, n)
			}
			if c := s.cart(t, "", id); c == nil || c.ID != id || len(c.Lines) != 0 || c.Status != "OPEN" {
				t.Fatalf("reading the empty cart: %+v", c)
			}
			if c := s.cart(t, "", "0123456789abcdef0123456789abcdef"); c != nil {
				t.Fatalf("an id the server did not make reads %+v", c)
			}
			var added struct{ CartLinesAdd cartJSON }
			decode(t, s.Query(t, "", `mutation($id: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $id, lines: $lines) { `+cartFields+` } }`,
				map[string]any{"id": id, "lines": []any{map[string]any{"itemId": blackL, "quantity": 1}}}), &added)
			if n := carts(); n != 1 || added.CartLinesAdd.ID != id || len(added.CartLinesAdd.Lines) != 1 {
				t.Fatalf("the first line: %+v, %d carts; want cart %s stored", added.CartLinesAdd, n, id)
			}
			decode(t, s.Query(t, s.CustomerToken, `mutation($id: ID!) { cartBuyerIdentityUpdate(cartId: $id) { id } }`, map[string]any{"id": id}), &struct{}{})

			var v struct {
				Goods struct {
					Skus []struct {
						ID      string
						Version int
					}
				}
			}
			decode(t, s.Query(t, s.AdminToken, `{ goods(id: 1) { skus { id version } } }`, nil), &v)
			for _, k := range v.Goods.Skus {
				if k.ID == blackL {
					decode(t, s.Query(t, s.AdminToken, `mutation($id: ID!, $v: Int!) { updateSku(input: {itemId: $id, expectedVersion: $v, sellPrice: "999.00"}) { id } }`,
						map[string]any{"id": blackL, "v": k.Version}), &struct{}{})
				}
			}
			const checkoutCart = `mutation($id: ID!) { checkoutCart(cartId: $id) { orderSn amount } }`
			if r := s.Query(t, s.CustomerToken, checkoutCart, map[string]any{"id": id}); r.Code() != "PRICE_CHANGED" {
				t.Fatalf("checkout after an unseen rise: %+v, want PRICE_CHANGED", r.Errors)
			}
			if c := s.cart(t, s.CustomerToken, id); c.Status != "OPEN" || len(c.Warnings) != 1 || c.Warnings[0].Code != "PRICE_CHANGED" || c.Cost.Subtotal != "999.00" {
				t.Fatalf("the read after PRICE_CHANGED: %+v", c)
			}
			var o struct {
				CheckoutCart struct{ OrderSn, Amount string }
			}
			decode(t, s.Query(t, s.CustomerToken, checkoutCart, map[string]any{"id": id}), &o)
			if o.CheckoutCart.Amount != "999.00" {
				t.Fatalf("checkout after the read: %+v, want 999.00", o)
			}
		})
	}
}
