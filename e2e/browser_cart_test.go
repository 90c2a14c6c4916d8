package e2e

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// cartState is what the page shows of the cart, read from its markup.
type cartState struct {
	Session, ProductBusy, SkuID string
	Busy, Total                 string
	CartID                      string
	Lines                       []struct{ ID, Sku, Qty string }
	OrderSn, Code               string
	AddDisabled                 bool
}

const readCart = `const c = document.querySelector("[data-testid=cart]");
const p = document.querySelector("[data-testid=product]");
const r = document.querySelector("[data-testid=cart-result]");
const add = document.querySelector("[data-testid=add-to-cart]");
return c && {
  session: document.getElementById("session").dataset.mode || "",
  productBusy: p ? p.getAttribute("aria-busy") : "", skuId: (p && p.dataset.skuId) || "",
  busy: c.getAttribute("aria-busy"), total: c.dataset.totalQuantity || "",
  cartId: localStorage.getItem("storefront.cart") || "",
  lines: [...c.querySelectorAll("[data-testid=cart-line]")].map((l) => ({
    id: l.dataset.lineId, sku: l.dataset.skuId, qty: l.querySelector("[data-testid=cart-qty]").value })),
  orderSn: r.dataset.orderSn || "", code: r.dataset.code || "",
  addDisabled: !add || add.disabled,
};`

// cartSettle waits until neither the product nor the cart is loading and
// cond holds.
func (b *browser) cartSettle(what string, cond func(*cartState) bool) *cartState {
	b.t.Helper()
	var st *cartState
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(readCart, &raw)
		st = nil
		if err := json.Unmarshal(raw, &st); err != nil || st == nil {
			return false, err
		}
		if st.Code != "" {
			b.t.Fatalf("%s: the cart shows error %s", what, st.Code)
		}
		return st.Busy == "false" && st.ProductBusy != "true" && cond(st), nil
	})
	return st
}

// The cart browser test: an anonymous visitor (the demo customer,
// signed out) adds two SKUs, signs in and the cart follows, changes a
// quantity, checks out from the cart, and sees one order, cross-checked
// with the API.
func TestBrowserCart(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	g := loadGoods(t, s, "1")
	blackL, whiteM := g.sku("黑色", "L"), g.sku("白色", "M")
	ordersBefore := myOrders(t, s)

	b.navigate(s.URL + "/shop/goods/1")
	b.cartSettle("the product page", func(c *cartState) bool { return c.Session == "demo" })
	b.click("[data-testid=sign-out]")
	b.cartSettle("signed out", func(c *cartState) bool { return c.Session == "demo-signed-out" })

	picks := [][2]string{{"黑色", "L"}, {"白色", "M"}}
	for i, pick := range picks {
		if i > 0 {
			// Un-choose the previous pick first: with L chosen, 白色 (no 白色/L stock) is greyed out.
			for _, v := range picks[i-1] {
				b.click(valueCSS(g.value(v)))
				b.cartSettle(v+" un-chosen", func(c *cartState) bool { return true })
			}
		}
		b.click(valueCSS(g.value(pick[0])))
		b.cartSettle(pick[0]+" chosen", func(c *cartState) bool { return true })
		b.click(valueCSS(g.value(pick[1])))
		want := g.sku(pick[0], pick[1]).ID
		b.cartSettle(pick[0]+"/"+pick[1]+" chosen", func(c *cartState) bool { return c.SkuID == want && !c.AddDisabled })
		b.click("[data-testid=add-to-cart]")
		b.cartSettle("added "+pick[0]+"/"+pick[1], func(c *cartState) bool { return len(c.Lines) == i+1 })
	}
	st := b.cartSettle("two lines", func(c *cartState) bool { return c.Total == "2" })
	id := st.CartID
	if c := s.cart(t, "", id); c == nil || len(c.Lines) != 2 {
		t.Fatalf("the visitor's cart as the API reads it anonymously: %+v", c)
	}

	b.click("[data-testid=demo-sign-in]")
	st = b.cartSettle("signed in", func(c *cartState) bool { return c.Session == "demo" && len(c.Lines) == 2 })
	if st.CartID != id {
		t.Fatalf("signing in changed the cart id from %s to %s", id, st.CartID)
	}
	if s.cart(t, "", id) != nil {
		t.Fatal("after sign-in the cart is still anonymous: cartBuyerIdentityUpdate did not run")
	}
	if c := s.cart(t, s.CustomerToken, id); c == nil || len(c.Lines) != 2 {
		t.Fatalf("the customer's cart: %+v", c)
	}

	// White M to 3: typed into the quantity box, as a person would.
	var line string
	for _, l := range st.Lines {
		if l.Sku == whiteM.ID {
			line = l.ID
		}
	}
	box := `[data-testid=cart-line][data-line-id="` + line + `"] [data-testid=cart-qty]`
	// Select all, type 3, Tab away (the change event fires on leaving the box).
	b.cmd("POST", "/element/"+b.find(box)+"/value", map[string]any{"text": "\ue009a\ue0003\ue004"}, nil)
	b.cartSettle("white M × 3", func(c *cartState) bool { return c.Total == "4" })

	b.click("[data-testid=cart-checkout]")
	st = b.cartSettle("the order", func(c *cartState) bool { return c.OrderSn != "" })
	after := myOrders(t, s)
	if len(after) != len(ordersBefore)+1 || after[0] != st.OrderSn {
		t.Fatalf("orders before %v, after %v; the page shows %s: want exactly one new order", ordersBefore, after, st.OrderSn)
	}
	var o struct {
		Order struct {
			Lines []struct {
				ItemID   string
				Quantity int
			}
		}
	}
	decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { lines { itemId quantity } } }`, map[string]any{"sn": st.OrderSn}), &o)
	got := map[string]int{}
	for _, l := range o.Order.Lines {
		got[l.ItemID] = l.Quantity
	}
	if len(got) != 2 || got[blackL.ID] != 1 || got[whiteM.ID] != 3 {
		t.Fatalf("order lines %v, want %s × 1 and %s × 3", got, blackL.ID, whiteM.ID)
	}
	if c := s.cart(t, s.CustomerToken, id); c == nil || c.Status != "COMPLETED" || c.Order == nil || c.Order.OrderSn != st.OrderSn {
		t.Fatalf("the cart after checkout: %+v", c)
	}
	st = b.cartSettle("an empty cart", func(c *cartState) bool { return c.Total == "0" && c.CartID == "" })
	if !slices.Equal(myOrders(t, s), after) {
		t.Fatal("orders changed after the checkout")
	}
}
