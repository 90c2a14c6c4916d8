package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/money"
)

// couponAPI is a coupon as the admin API lists it.
type couponAPI struct {
	ID, Name, Kind, MinSubtotal string
	AmountOff, MaxDiscount      *string
	PercentOff, TotalQuantity   *int
	PerCustomerLimit, ValidDays int
	Code                        *string
	Stopped                     bool
	Claimed, Used               int
}

func coupons(t *testing.T, s *Server) []couponAPI {
	t.Helper()
	var d struct {
		Coupons struct{ Edges []struct{ Node couponAPI } }
	}
	decode(t, s.Query(t, s.AdminToken, `{ coupons(first: 100) { edges { node { id name kind minSubtotal amountOff maxDiscount
		percentOff totalQuantity perCustomerLimit validDays code stopped claimed used } } } }`, nil), &d)
	out := make([]couponAPI, len(d.Coupons.Edges))
	for i, e := range d.Coupons.Edges {
		out[i] = e.Node
	}
	return out
}

// The console's Coupons page in Chromium, on every backend: two coupons
// created through its form (one of each kind) are what the API lists,
// the list shows a customer's claim, and "Stop coupon" stops one (the
// API says so, the button goes). Driven by roles and accessible names.
func TestAdminConsoleCoupons(t *testing.T) {
	for _, backend := range testdb.Backends {
		t.Run(string(backend), func(t *testing.T) {
			b := startBrowser(t)
			s := Start(t, testdb.Spec(t, backend))
			requireConsole(t, s)
			signIn(t, b, s)
			b.clickEl(b.byRole("link", "Coupons"))
			b.byRole("heading", "Coupons")

			b.fill("Coupon name", "满100减10")
			b.fill("Amount off", "10")
			b.fill("Minimum subtotal", "100.00")
			b.fill("Total quantity", "50")
			b.fill("Per-customer limit", "2")
			b.fill("Valid days", "7")
			b.fill("Coupon code", "SAVE10")
			if !b.absent("textbox", "Percent off") {
				t.Errorf("an AMOUNT_OFF coupon's form offers Percent off")
			}
			b.uniqueNames("the coupons page")
			b.press("Create coupon")
			b.waitRegion("status", "Coupon 满100减10 created")

			b.selectOption("Kind", "Percent off")
			b.fill("Coupon name", "T恤85折")
			b.fill("Percent off", "15")
			b.fill("Maximum discount", "20.00")
			b.fill("Minimum subtotal", "0.00")
			b.fill("Goods ids", "1")
			b.fill("Total quantity", "")
			b.fill("Per-customer limit", "1")
			b.fill("Valid days", "30")
			b.press("Create coupon")
			b.waitRegion("status", "Coupon T恤85折 created")

			list := coupons(t, s)
			if len(list) != 2 {
				t.Fatalf("the API lists %d coupons, want 2: %+v", len(list), list)
			}
			pct, amt := list[0], list[1] // newest first
			if amt.Name != "满100减10" || amt.Kind != "AMOUNT_OFF" || amt.AmountOff == nil || *amt.AmountOff != "10.00" ||
				amt.MinSubtotal != "100.00" || amt.TotalQuantity == nil || *amt.TotalQuantity != 50 || amt.PerCustomerLimit != 2 ||
				amt.ValidDays != 7 || amt.Code == nil || *amt.Code != "SAVE10" || amt.Stopped {
				t.Errorf("the amount coupon as created: %+v", amt)
			}
			if pct.Name != "T恤85折" || pct.Kind != "PERCENT_OFF" || pct.PercentOff == nil || *pct.PercentOff != 15 ||
				pct.MaxDiscount == nil || *pct.MaxDiscount != "20.00" || pct.TotalQuantity != nil || pct.AmountOff != nil {
				t.Errorf("the percent coupon as created: %+v", pct)
			}

			// A customer claims by code; the list shows it once read again.
			decode(t, s.Query(t, s.CustomerToken, `mutation { claimCoupon(code: "SAVE10") { id } }`, nil), &struct{}{})
			b.clickEl(b.byRole("link", "Orders"))
			b.byRole("heading", "Orders")
			b.clickEl(b.byRole("link", "Coupons"))
			b.waitFor("the claim in the list", 20*time.Second, func() (bool, error) {
				got := b.regionText("main")
				return strings.Contains(got, "1 / 50"), fmt.Errorf("the list says %q (alert %q)", excerpt(got, "Every coupon"), b.regionText("alert"))
			})

			stop := fmt.Sprintf("Stop coupon 满100减10 (%s)", amt.ID)
			b.press(stop)
			b.waitRegion("status", "Coupon 满100减10 stopped")
			b.waitFor("the stop button gone", 10*time.Second, func() (bool, error) { return b.absent("button", stop), nil })
			for _, c := range coupons(t, s) {
				if c.Stopped != (c.ID == amt.ID) {
					t.Errorf("after stopping %s: %s stopped=%v", amt.ID, c.ID, c.Stopped)
				}
				if c.ID == amt.ID && c.Claimed != 1 {
					t.Errorf("the stopped coupon's claimed = %d, want 1", c.Claimed)
				}
			}
			if b.absent("button", fmt.Sprintf("Stop coupon T恤85折 (%s)", pct.ID)) {
				t.Errorf("the other coupon lost its stop button")
			}
		})
	}
}

// The goods editor's purchase limit in Chromium: set, read back through
// the API, refused when not a whole number of 1 or more (nothing sent),
// and cleared.
func TestAdminConsolePurchaseLimit(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	requireConsole(t, s)
	signIn(t, b, s)
	b.clickEl(b.byRole("link", "纯棉圆领T恤"))
	limit := func() *int {
		var d struct{ Goods struct{ PurchaseLimit *int } }
		decode(t, s.Query(t, s.AdminToken, `{ goods(id: "1") { purchaseLimit } }`, nil), &d)
		return d.Goods.PurchaseLimit
	}
	b.fill("Purchase limit", "2")
	save(t, b)
	if l := limit(); l == nil || *l != 2 {
		t.Fatalf("purchaseLimit after the save: %v, want 2", l)
	}
	if v := b.prop(b.byRole("textbox", "Purchase limit"), "value"); v != "2" {
		t.Errorf("the reloaded editor shows purchase limit %v, want 2", v)
	}
	b.fill("Purchase limit", "0")
	b.press("Save")
	if got := b.waitRegion("alert", "Purchase limit"); !strings.Contains(got, "1 or more") {
		t.Errorf("a purchase limit of 0 is refused with %q", got)
	}
	if l := limit(); l == nil || *l != 2 {
		t.Fatalf("a refused limit changed it: %v", l)
	}
	b.fill("Purchase limit", "")
	save(t, b)
	if l := limit(); l != nil {
		t.Fatalf("purchaseLimit after clearing: %d, want null", *l)
	}
}

// promoState is what the shop shows of coupons: the product page's, the
// cart's choice and discount, the order placed.
type promoState struct {
	cartState
	Coupons                       []string
	Claimed, ClaimCode            string
	Options                       []string
	Chosen, Discount              string
	Warnings                      []string
	Subtotal, OrderDiscount, Amnt string
}

const readPromo = `const c = document.querySelector("[data-testid=cart]");
const r = document.querySelector("[data-testid=coupon-result]");
const sel = document.querySelector("[data-testid=cart-coupon]");
const d = document.querySelector("[data-testid=cart-discount]");
const o = document.querySelector("[data-testid=cart-result]");
const box = document.querySelector("[data-testid=coupons]");
return {
  busy: c.getAttribute("aria-busy") === "true" || (box && box.getAttribute("aria-busy") === "true") ? "true" : "false",
  total: c.dataset.totalQuantity || "", cartId: localStorage.getItem("storefront.cart") || "",
  lines: [...c.querySelectorAll("[data-testid=cart-line]")].map((l) => ({ id: l.dataset.lineId, sku: l.dataset.skuId })),
  coupons: [...document.querySelectorAll("[data-testid=coupon]")].map((x) => x.dataset.couponId),
  claimed: (r && r.dataset.userCouponId) || "", claimCode: (r && r.dataset.code) || "",
  options: sel ? [...sel.options].map((x) => x.value) : [], chosen: sel ? sel.value : "",
  discount: d ? d.dataset.amount : "",
  warnings: [...c.querySelectorAll("[data-testid=cart-warning]")].map((w) => w.dataset.code),
  orderSn: o.dataset.orderSn || "", code: o.dataset.code || "",
  subtotal: o.dataset.subtotal || "", orderDiscount: o.dataset.discount || "", amnt: o.dataset.amount || "",
};`

func (b *browser) promoSettle(what string, cond func(*promoState) bool) *promoState {
	b.t.Helper()
	var st *promoState
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(readPromo, &raw)
		st = nil
		if err := json.Unmarshal(raw, &st); err != nil || st == nil {
			return false, err
		}
		if st.Code != "" || st.ClaimCode != "" {
			b.t.Fatalf("%s: the page shows error %s%s", what, st.Code, st.ClaimCode)
		}
		return st.Busy == "false" && cond(st), fmt.Errorf("%+v", *st)
	})
	return st
}

// The shopper's side in Chromium: the product page offers the coupon and
// claims it, the cart picks it from the customer's coupons, shows the
// server's discount (and a COUPON_NOT_APPLICABLE warning, no discount,
// while the threshold is unmet), the checkout places the order with it, and
// the order's subtotal, discount and amount are exact on the page, on the
// orders page and in the API.
func TestBrowserCoupon(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	g := loadGoods(t, s, "1")
	blackL := g.sku("黑色", "L")
	price := money.MustParse(blackL.SellPrice)
	// 15% off T-shirts of at least two shirts' worth: three shirts qualify,
	// one does not.
	var created struct{ CreateCoupon struct{ ID string } }
	decode(t, s.Query(t, s.AdminToken, `mutation($min: Money!) { createCoupon(input: {name: "T恤85折", kind: PERCENT_OFF,
		percentOff: 15, minSubtotal: $min, goodsIds: ["1"]}) { id } }`, map[string]any{"min": (price * 2).String()}), &created)
	couponID := created.CreateCoupon.ID
	want := (price*3*15 + 50) / 100 // half up to the cent

	b.navigate(s.URL + "/shop/goods/1")
	b.promoSettle("the product page's coupons", func(p *promoState) bool { return len(p.Coupons) == 1 && p.Coupons[0] == couponID })
	b.click(fmt.Sprintf(`[data-testid=coupon][data-coupon-id="%s"] button`, couponID))
	st := b.promoSettle("the claim", func(p *promoState) bool { return p.Claimed != "" })
	userCoupon := st.Claimed

	b.click(valueCSS(g.value("黑色")))
	b.cartSettle("黑色 chosen", func(c *cartState) bool { return true })
	b.click(valueCSS(g.value("L")))
	b.cartSettle("黑色/L chosen", func(c *cartState) bool { return c.SkuID == blackL.ID && !c.AddDisabled })
	b.click("[data-testid=add-to-cart]")
	st = b.promoSettle("the coupon offered in the cart", func(p *promoState) bool {
		return len(p.Lines) == 1 && strings.Contains(strings.Join(p.Options, ","), userCoupon)
	})
	b.click(fmt.Sprintf(`[data-testid=cart-coupon] option[value="%s"]`, userCoupon))
	// One shirt is under the threshold: the server warns, nothing is off.
	st = b.promoSettle("the coupon chosen", func(p *promoState) bool { return p.Chosen == userCoupon && len(p.Warnings) == 1 })
	if st.Warnings[0] != "COUPON_NOT_APPLICABLE" || st.Discount != "" {
		t.Fatalf("one shirt with the coupon: warnings %v, discount %q; want COUPON_NOT_APPLICABLE and none", st.Warnings, st.Discount)
	}
	box := `[data-testid=cart-line] [data-testid=cart-qty]`
	b.cmd("POST", "/element/"+b.find(box)+"/value", map[string]any{"text": "\ue009a\ue0003\ue004"}, nil)
	st = b.promoSettle("three shirts", func(p *promoState) bool { return p.Total == "3" && p.Discount != "" })
	if st.Discount != want.String() || len(st.Warnings) != 0 || st.Chosen != userCoupon {
		t.Fatalf("three shirts: the cart shows discount %s, warnings %v, coupon %s; want %s, none, %s", st.Discount, st.Warnings, st.Chosen, want, userCoupon)
	}
	if c := s.cart(t, s.CustomerToken, st.CartID); c == nil {
		t.Fatal("the cart is not the customer's")
	}
	var api struct {
		Cart struct {
			Cost       struct{ Discount string }
			UserCoupon struct{ ID string }
		}
	}
	decode(t, s.Query(t, s.CustomerToken, `query($id: ID!) { cart(id: $id) { cost { discount } userCoupon { id } } }`, map[string]any{"id": st.CartID}), &api)
	if api.Cart.Cost.Discount != want.String() || api.Cart.UserCoupon.ID != userCoupon {
		t.Fatalf("the API's cart: %+v, want discount %s of %s", api.Cart, want, userCoupon)
	}

	b.click("[data-testid=cart-checkout]")
	st = b.promoSettle("the order", func(p *promoState) bool { return p.OrderSn != "" })
	var o struct {
		Order struct {
			Subtotal, Discount, Amount, ShippingFee string
			Lines                                   []struct{ Discount string }
		}
	}
	decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { subtotal discount amount shippingFee lines { discount } } }`,
		map[string]any{"sn": st.OrderSn}), &o)
	sub := price * 3
	if o.Order.Subtotal != sub.String() || o.Order.Discount != want.String() || len(o.Order.Lines) != 1 || o.Order.Lines[0].Discount != want.String() ||
		money.MustParse(o.Order.Amount) != sub-want+money.MustParse(o.Order.ShippingFee) {
		t.Fatalf("the order: %+v; want subtotal %s, discount %s, amount subtotal − discount + shipping", o.Order, sub, want)
	}
	if st.Subtotal != o.Order.Subtotal || st.OrderDiscount != o.Order.Discount || st.Amnt != o.Order.Amount {
		t.Errorf("the page shows subtotal %s discount %s amount %s; the API %+v", st.Subtotal, st.OrderDiscount, st.Amnt, o.Order)
	}
	var mine struct {
		MyCoupons struct {
			Edges []struct {
				Node struct{ ID, Status, OrderSn string }
			}
		}
	}
	decode(t, s.Query(t, s.CustomerToken, `{ myCoupons { edges { node { id status orderSn } } } }`, nil), &mine)
	if len(mine.MyCoupons.Edges) != 1 || mine.MyCoupons.Edges[0].Node.Status != "LOCKED" || mine.MyCoupons.Edges[0].Node.OrderSn != st.OrderSn {
		t.Errorf("the customer's coupons after the order: %+v", mine.MyCoupons.Edges)
	}

	b.navigate(s.URL + "/shop/orders")
	var summary map[string]string
	b.waitFor("the order on the orders page", 20*time.Second, func() (bool, error) {
		b.exec(`const o = document.querySelector('[data-testid=order][data-order-sn="`+st.OrderSn+`"] [data-testid=order-summary]');
return o ? { subtotal: o.dataset.subtotal, discount: o.dataset.discount, amount: o.dataset.amount, text: o.textContent } : null;`, &summary)
		return summary != nil, nil
	})
	if summary["subtotal"] != o.Order.Subtotal || summary["discount"] != o.Order.Discount || summary["amount"] != o.Order.Amount ||
		!strings.Contains(summary["text"], "discount −¥"+o.Order.Discount) {
		t.Errorf("the orders page shows %v; the API %+v", summary, o.Order)
	}
}
