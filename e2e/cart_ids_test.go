package e2e

import (
	"testing"

	"storefront/internal/testsupport/testdb"
)

// The cart's arguments are ID! as the contract has them: a client that
// declares its variables ID!, as it would for any other id, reads and
// changes a cart (no scalar of the cart's own to know about).
func TestCartArgumentsAreIDs(t *testing.T) {
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	blackL, _ := tshirtSku(t, s, "黑色,L")
	whiteM, _ := tshirtSku(t, s, "白色,M")
	var created struct{ CartCreate cartJSON }
	decode(t, s.Query(t, "", `mutation($lines: [CartLineInput!]) { cartCreate(input: {lines: $lines}) { `+cartFields+` } }`,
		map[string]any{"lines": []any{map[string]any{"itemId": blackL, "quantity": 1}}}), &created)
	id := created.CartCreate.ID

	var added struct{ CartLinesAdd cartJSON }
	decode(t, s.Query(t, "", `mutation($cartId: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $cartId, lines: $lines) { `+cartFields+` } }`,
		map[string]any{"cartId": id, "lines": []any{map[string]any{"itemId": whiteM, "quantity": 2}}}), &added)
	if added.CartLinesAdd.ID != id || added.CartLinesAdd.Cost.TotalQuantity != 3 {
		t.Fatalf("cartLinesAdd through an ID! variable: %+v", added.CartLinesAdd)
	}
	var read struct{ Cart *cartJSON }
	decode(t, s.Query(t, "", `query($id: ID!) { cart(id: $id) { `+cartFields+` } }`, map[string]any{"id": id}), &read)
	if read.Cart == nil || read.Cart.ID != id || len(read.Cart.Lines) != 2 || read.Cart.Cost.TotalQuantity != 3 {
		t.Fatalf("cart through an ID! variable: %+v", read.Cart)
	}
	line := read.Cart.Lines[0].ID
	var updated struct{ CartLinesUpdate cartJSON }
	decode(t, s.Query(t, "", `mutation($cartId: ID!, $line: ID!) { cartLinesUpdate(cartId: $cartId, lines: [{lineId: $line, quantity: 3}]) { `+cartFields+` } }`,
		map[string]any{"cartId": id, "line": line}), &updated)
	if updated.CartLinesUpdate.Cost.TotalQuantity != 5 {
		t.Fatalf("cartLinesUpdate through ID! variables: %+v", updated.CartLinesUpdate)
	}
	var removed struct{ CartLinesRemove cartJSON }
	decode(t, s.Query(t, "", `mutation($cartId: ID!, $lines: [ID!]!) { cartLinesRemove(cartId: $cartId, lineIds: $lines) { `+cartFields+` } }`,
		map[string]any{"cartId": id, "lines": []string{line}}), &removed)
	if len(removed.CartLinesRemove.Lines) != 1 || removed.CartLinesRemove.Cost.TotalQuantity != 2 {
		t.Fatalf("cartLinesRemove through ID! variables: %+v", removed.CartLinesRemove)
	}
	decode(t, s.Query(t, s.CustomerToken, `mutation($cartId: ID!) { cartBuyerIdentityUpdate(cartId: $cartId) { id } }`, map[string]any{"cartId": id}), &struct{}{})
	var order struct {
		CheckoutCart struct{ OrderSn, Status string }
	}
	decode(t, s.Query(t, s.CustomerToken, `mutation($cartId: ID!) { checkoutCart(cartId: $cartId) { orderSn status } }`, map[string]any{"cartId": id}), &order)
	if order.CheckoutCart.OrderSn == "" {
		t.Fatalf("checkoutCart through an ID! variable: %+v", order)
	}
}

// A malformed id, wherever it comes (an argument, an input field, a list
// of ids; as a variable or inline), answers INVALID_INPUT and changes
// nothing: the cart keeps its lines and the SKU its stock.
func TestMalformedIDsOverHTTP(t *testing.T) {
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	blackL, stock := tshirtSku(t, s, "黑色,L")
	var created struct{ CartCreate cartJSON }
	decode(t, s.Query(t, "", `mutation($lines: [CartLineInput!]) { cartCreate(input: {lines: $lines}) { `+cartFields+` } }`,
		map[string]any{"lines": []any{map[string]any{"itemId": blackL, "quantity": 1}}}), &created)
	id := created.CartCreate.ID
	for _, bad := range []string{"abc", "0", "-1", "1.5", ""} {
		for _, c := range []struct {
			name, token, query string
			vars               map[string]any
		}{
			{"cartLinesAdd itemId", "", `mutation($c: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $c, lines: $lines) { id } }`,
				map[string]any{"c": id, "lines": []any{map[string]any{"itemId": bad, "quantity": 1}}}},
			{"cartLinesAdd specValueIds", "", `mutation($c: ID!, $lines: [CartLineInput!]!) { cartLinesAdd(cartId: $c, lines: $lines) { id } }`,
				map[string]any{"c": id, "lines": []any{map[string]any{"goodsId": "1", "specValueIds": []string{"1", bad}, "quantity": 1}}}},
			{"cartLinesUpdate lineId", "", `mutation($c: ID!, $l: ID!) { cartLinesUpdate(cartId: $c, lines: [{lineId: $l, quantity: 0}]) { id } }`,
				map[string]any{"c": id, "l": bad}},
			{"cartLinesRemove lineIds", "", `mutation($c: ID!, $l: [ID!]!) { cartLinesRemove(cartId: $c, lineIds: $l) { id } }`,
				map[string]any{"c": id, "l": []string{bad}}},
			{"placeOrder itemId", s.CustomerToken, placeOrder,
				map[string]any{"items": []any{map[string]any{"itemId": bad, "quantity": 1}}}},
			{"setGoodsStatus goodsId", s.AdminToken, `mutation($g: ID!) { setGoodsStatus(goodsId: $g, status: OFF_SHELF) { id } }`,
				map[string]any{"g": bad}},
			{"stockLedger itemId", s.AdminToken, `query($i: ID!) { stockLedger(itemId: $i) { edges { cursor } } }`, map[string]any{"i": bad}},
			{"goods id", "", `query($id: ID!) { goods(id: $id) { id } }`, map[string]any{"id": bad}},
			{"goods id inline", "", `{ goods(id: "` + bad + `") { id } }`, nil},
		} {
			r := s.Query(t, c.token, c.query, c.vars)
			if r.Code() != "INVALID_INPUT" {
				t.Errorf("%s %q: code %q, want INVALID_INPUT (%+v)", c.name, bad, r.Code(), r.Errors)
			}
		}
	}
	if c := s.cart(t, "", id); c == nil || len(c.Lines) != 1 || c.Cost.TotalQuantity != 1 {
		t.Fatalf("the cart changed after malformed ids: %+v", c)
	}
	if _, now := tshirtSku(t, s, "黑色,L"); now != stock {
		t.Fatalf("stock %d after malformed ids, was %d", now, stock)
	}
}
