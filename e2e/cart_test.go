package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

const cartFields = `id status updatedAt expiresAt
  lines { id quantity unitPrice subtotal sku { id specValueStr } goods { id name } }
  cost { subtotal totalQuantity } warnings { code lineId message } order { orderSn }`

type cartJSON struct {
	ID, Status           string
	UpdatedAt, ExpiresAt time.Time
	Lines                []struct {
		ID                  string
		Quantity            int
		UnitPrice, Subtotal string
		Sku                 struct{ ID, SpecValueStr string }
		Goods               struct{ ID, Name string }
	}
	Cost struct {
		Subtotal      string
		TotalQuantity int
	}
	Warnings []struct{ Code, LineID, Message string }
	Order    *struct{ OrderSn string }
}

// units reads only the cart's total quantity: an answer that reads no
// product view, which the response cache would keep valid for ever were
// cart fields cacheable.
func (s *Server) units(t *testing.T, id string) int {
	t.Helper()
	var d struct {
		Cart struct{ Cost struct{ TotalQuantity int } }
	}
	decode(t, s.Query(t, "", `query($id: ID!) { cart(id: $id) { cost { totalQuantity } } }`, map[string]any{"id": id}), &d)
	return d.Cart.Cost.TotalQuantity
}

func (s *Server) cart(t *testing.T, token, id string) *cartJSON {
	t.Helper()
	var d struct{ Cart *cartJSON }
	decode(t, s.Query(t, token, `query($id: ID!) { cart(id: $id) { `+cartFields+` } }`, map[string]any{"id": id}), &d)
	return d.Cart
}

// The cart contract through the binary, on both backends: an anonymous
// cart read and changed by id (never from the response cache, which is
// on), attached at sign-in and then invisible to anonymous callers, a
// warning after an admin disables a SKU and SKU_UNAVAILABLE at checkout
// with the cart left OPEN, then checkoutCart with the Idempotency-Key
// header placing one order, answered again on retry, CART_COMPLETED on
// changes; and serve's closer purging carts past --cart-ttl.
func TestCartOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec, "--cart-ttl", "3s", "--close-interval", "200ms")
			blackL, _ := tshirtSku(t, s, "黑色,L")
			whiteM, _ := tshirtSku(t, s, "白色,M")
			var created struct{ CartCreate cartJSON }
			decode(t, s.Query(t, "", `mutation($lines: [CartLineInput!]) { cartCreate(input: {lines: $lines}) { `+cartFields+` } }`,
				map[string]any{"lines": []any{map[string]any{"itemId": blackL, "quantity": 1}}}), &created)
			id := created.CartCreate.ID
			// A refused token is not an anonymous visitor.
			if r := s.Query(t, "not.a.token", `query($id: ID!) { cart(id: $id) { id } }`, map[string]any{"id": id}); r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("cart read with a bad token: %+v", r.Errors)
			}
			// Read it a few times, as a page would: were cart reads cacheable,
			// the response cache (on) would hold this answer by now (its
			// writes are asynchronous, so one read would not prove much).
			if c := s.cart(t, "", id); c == nil || len(c.Lines) != 1 || c.Cost.Subtotal != "109.00" {
				t.Fatalf("anonymous read: %+v", c)
			}
			for range 5 {
				if n := s.units(t, id); n != 1 {
					t.Fatalf("anonymous read: %d units, want 1", n)
				}
			}
			var added struct{ CartLinesAdd cartJSON }
			decode(t, s.Query(t, "", `mutation($id: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $id, lines: $lines) { `+cartFields+` } }`,
				map[string]any{"id": id, "lines": []any{map[string]any{"itemId": whiteM, "quantity": 2}}}), &added)
			// The same query as before: were cart reads cached, these would be the old cart.
			if n := s.units(t, id); n != 3 {
				t.Fatalf("read after add: %d units, want 3 (a cart read came from the response cache?)", n)
			}
			c := s.cart(t, "", id)
			if len(c.Lines) != 2 || c.Cost.TotalQuantity != 3 || c.Cost.Subtotal != "307.00" {
				t.Fatalf("read after add: %+v", c)
			}

			var attached struct{ CartBuyerIdentityUpdate cartJSON }
			decode(t, s.Query(t, s.CustomerToken, `mutation($id: ID!) { cartBuyerIdentityUpdate(cartId: $id) { id } }`, map[string]any{"id": id}), &attached)
			if s.cart(t, "", id) != nil {
				t.Fatal("an anonymous caller reads the customer's cart")
			}
			if r := s.Query(t, "", `mutation($id: ID!) { cartLinesRemove(cartId: $id, lineIds: ["1"]) { id } }`, map[string]any{"id": id}); r.Code() != "NOT_FOUND" {
				t.Fatalf("anonymous change of the customer's cart: %+v", r.Errors)
			}

			// An admin disables white M: a warning, and checkout refuses.
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
				if k.ID == whiteM {
					decode(t, s.Query(t, s.AdminToken, `mutation($id: ID!, $v: Int!) { updateSku(input: {itemId: $id, expectedVersion: $v, status: DISABLED}) { id } }`,
						map[string]any{"id": whiteM, "v": k.Version}), &struct{}{})
				}
			}
			c = s.cart(t, s.CustomerToken, id)
			if len(c.Warnings) != 1 || c.Warnings[0].Code != "SKU_UNAVAILABLE" || c.Warnings[0].LineID != c.Lines[1].ID {
				t.Fatalf("warnings %+v", c.Warnings)
			}
			const checkoutCart = `mutation($id: ID!) { checkoutCart(cartId: $id) { orderSn amount status lines { itemId quantity } } }`
			if r := s.queryWithKey(t, s.CustomerToken, "e2e-cart-1", checkoutCart, map[string]any{"id": id}); r.Code() != "SKU_UNAVAILABLE" {
				t.Fatalf("checkout with a disabled SKU: %+v", r.Errors)
			}
			if c := s.cart(t, s.CustomerToken, id); c.Status != "OPEN" || len(c.Lines) != 2 {
				t.Fatalf("cart after a refused checkout: %+v", c)
			}
			var upd struct{ CartLinesUpdate cartJSON }
			decode(t, s.Query(t, s.CustomerToken, `mutation($id: ID!, $l: ID!) { cartLinesUpdate(cartId: $id, lines: [{lineId: $l, quantity: 0}]) { `+cartFields+` } }`,
				map[string]any{"id": id, "l": c.Lines[1].ID}), &upd)

			var o1, o2 struct {
				CheckoutCart struct{ OrderSn, Amount, Status string }
			}
			decode(t, s.queryWithKey(t, s.CustomerToken, "e2e-cart-1", checkoutCart, map[string]any{"id": id}), &o1)
			decode(t, s.Query(t, s.CustomerToken, checkoutCart, map[string]any{"id": id}), &o2)
			if o1.CheckoutCart.Amount != "109.00" || o2.CheckoutCart.OrderSn != o1.CheckoutCart.OrderSn {
				t.Fatalf("checkout %+v, retry %+v", o1, o2)
			}
			var mine struct {
				MyOrders struct {
					Edges []struct{ Node struct{ OrderSn string } }
				}
			}
			decode(t, s.Query(t, s.CustomerToken, `{ myOrders { edges { node { orderSn } } } }`, nil), &mine)
			if len(mine.MyOrders.Edges) != 1 || mine.MyOrders.Edges[0].Node.OrderSn != o1.CheckoutCart.OrderSn {
				t.Fatalf("orders %+v", mine)
			}
			if c := s.cart(t, s.CustomerToken, id); c.Status != "COMPLETED" || c.Order == nil || c.Order.OrderSn != o1.CheckoutCart.OrderSn {
				t.Fatalf("completed cart %+v", c)
			}
			if r := s.Query(t, s.CustomerToken, `mutation($id: ID!) { cartLinesAdd(cartId: $id, lines: [{itemId: "1", quantity: 1}]) { id } }`, map[string]any{"id": id}); r.Code() != "CART_COMPLETED" {
				t.Fatalf("change of a completed cart: %+v", r.Errors)
			}

			// --cart-ttl 3s: the cart reads null once its TTL is over, and the
			// closer (every 200 ms) deletes it.
			db, err := store.Open(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			deadline := time.Now().Add(20 * time.Second)
			for {
				n, err := db.Client.Cart.Query().Count(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d carts left 20 s after a TTL of 3 s", n)
				}
				time.Sleep(100 * time.Millisecond)
			}
			if s.cart(t, s.CustomerToken, id) != nil {
				t.Fatal("a purged cart reads")
			}

			// `storefront close-expired --cart-ttl` purges too: a fresh cart is
			// untouched for 1ms once the clock's second (carts store whole
			// seconds) has passed. It has a line: an empty one is not stored.
			var fresh struct{ CartCreate struct{ ID string } }
			decode(t, s.Query(t, "", `mutation { cartCreate(input: {lines: [{itemId: "1", quantity: 1}]}) { id } }`, nil), &fresh)
			deadline = time.Now().Add(10 * time.Second)
			for {
				out, err := exec.Command(binary(t), "close-expired", "--db", spec, "--cart-ttl", "1ms").CombinedOutput()
				if err != nil {
					t.Fatalf("close-expired: %v\n%s", err, out)
				}
				if strings.Contains(string(out), "purged 1 expired carts") {
					break
				}
				if !strings.Contains(string(out), "purged 0 expired carts") || time.Now().After(deadline) {
					t.Fatalf("close-expired --cart-ttl 1ms said:\n%s", out)
				}
				time.Sleep(200 * time.Millisecond)
			}
			if s.cart(t, "", fresh.CartCreate.ID) != nil {
				t.Fatal("the cart close-expired purged still reads")
			}
		})
	}
}
