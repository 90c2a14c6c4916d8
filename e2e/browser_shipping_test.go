package e2e

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// shipState is what the shop shows of shipping: the cart's address
// picker and fee, and the orders page.
type shipState struct {
	Busy, Picker, Fee, FeeCode, FeeText string
	Options                             []string
	OrderSn, Code, FormError            string
	Orders                              []struct{ Sn, Status, Shipments, Summary string }
	OrdersBusy, OrdersCode              string
}

const readShipping = `const c = document.querySelector("[data-testid=cart]");
const s = document.querySelector("[data-testid=cart-shipping]");
const p = document.querySelector("[data-testid=address-picker]");
const r = document.querySelector("[data-testid=cart-result]");
const f = document.querySelector("[data-testid=address-error]");
const os = document.querySelector("[data-testid=orders-status]");
return {
  busy: c ? c.getAttribute("aria-busy") : "", picker: p ? p.value : "",
  options: p ? [...p.options].map((o) => o.textContent) : [],
  fee: (s && s.dataset.amount) || "", feeCode: (s && s.dataset.code) || "", feeText: s ? s.textContent : "",
  orderSn: (r && r.dataset.orderSn) || "", code: (r && r.dataset.code) || "", formError: f ? f.textContent : "",
  orders: [...document.querySelectorAll("[data-testid=order]")].map((o) => ({ sn: o.dataset.orderSn, status: o.dataset.status,
    shipments: (o.querySelector("[data-testid=shipments]") || {}).textContent || "",
    summary: o.querySelector("[data-testid=order-summary]").textContent })),
  ordersBusy: document.getElementById("app").getAttribute("aria-busy") || "", ordersCode: (os && os.dataset.code) || "",
};`

func (b *browser) shipSettle(what string, cond func(*shipState) bool) *shipState {
	b.t.Helper()
	var st *shipState
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(readShipping, &raw)
		st = nil
		if err := json.Unmarshal(raw, &st); err != nil || st == nil {
			return false, err
		}
		return st.Busy != "true" && st.OrdersBusy != "true" && cond(st), fmt.Errorf("the page shows %+v", *st)
	})
	return st
}

// Issue 41 in the shop, in Chromium, on every backend: the demo customer
// puts the water bottle in the cart and sees its shipping to their default
// address, adds a Beijing address with the form (the fee follows the
// picker), checks out to it, and after the shop ships the order confirms
// its receipt on "My orders"; each step read back through the API.
func TestBrowserShipping(t *testing.T) {
	for _, backend := range testdb.Backends {
		t.Run(string(backend), func(t *testing.T) {
			b := startBrowser(t)
			s := Start(t, testdb.Spec(t, backend))
			var bottle struct{ Goods struct{ ID string } }
			decode(t, s.Query(t, "", `{ goods(slug: "demo-bottle") { id } }`, nil), &bottle)
			g := loadGoods(t, s, bottle.Goods.ID)
			small := g.sku("500ml")

			b.navigate(s.URL + "/shop/goods/" + bottle.Goods.ID)
			b.cartSettle("the bottle's page", func(c *cartState) bool { return c.Session == "demo" })
			b.click(valueCSS(g.value("500ml")))
			b.cartSettle("500ml chosen", func(c *cartState) bool { return c.SkuID == small.ID && !c.AddDisabled })
			b.click("[data-testid=add-to-cart]")
			b.cartSettle("the bottle in the cart", func(c *cartState) bool { return c.Total == "1" })
			// 350 g to Shanghai (the demo address, the default): 5.00.
			st := b.shipSettle("the fee to the default address", func(s *shipState) bool { return s.Fee != "" })
			if st.Fee != "5.00" || len(st.Options) != 1 || !strings.Contains(st.Options[0], "徐汇区") || !strings.Contains(st.Options[0], "(default)") {
				t.Fatalf("the cart's shipping: %+v", st)
			}

			// A new address by the form: first a region code the server refuses.
			b.click("[data-testid=address-new]")
			fill := func(name, v string) {
				el := b.find(`[data-testid=address-form] [name=` + name + `]`)
				b.cmd("POST", "/element/"+el+"/clear", map[string]any{}, nil)
				b.cmd("POST", "/element/"+el+"/value", map[string]any{"text": v}, nil)
			}
			for name, v := range map[string]string{"name": "王五", "phone": "13700137000", "regionCode": "990101",
				"line": "东长安街 1 号", "postalCode": "100010"} {
				fill(name, v)
			}
			b.click("[data-testid=address-save]")
			st = b.shipSettle("the refused region code", func(s *shipState) bool { return s.FormError != "" })
			if !strings.Contains(st.FormError, "INVALID_INPUT") {
				t.Errorf("region 990101: %q, want INVALID_INPUT", st.FormError)
			}
			fill("regionCode", "110101")
			b.click("[data-testid=address-save]")
			// 350 g elsewhere: 8.00; the new address is chosen.
			st = b.shipSettle("the fee to Beijing", func(s *shipState) bool { return len(s.Options) == 2 && s.Fee == "8.00" })
			var book struct {
				MyAddresses []struct{ ID, RegionCode, Province, City, District string }
			}
			decode(t, s.Query(t, s.CustomerToken, `{ myAddresses { id regionCode province city district } }`, nil), &book)
			if len(book.MyAddresses) != 2 || book.MyAddresses[1].RegionCode != "110101" || st.Picker != book.MyAddresses[1].ID ||
				book.MyAddresses[1].Province+book.MyAddresses[1].City+book.MyAddresses[1].District != "北京市北京市东城区" {
				t.Fatalf("the book %+v, the picker on %s", book, st.Picker)
			}

			b.click("[data-testid=cart-checkout]")
			st = b.shipSettle("the order", func(s *shipState) bool { return s.OrderSn != "" || s.Code != "" })
			var o struct {
				Order struct {
					Amount, ShippingFee string
					ShippingAddress     struct{ RegionCode string }
				}
			}
			decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { amount shippingFee shippingAddress { regionCode } } }`,
				map[string]any{"sn": st.OrderSn}), &o)
			if st.Code != "" || o.Order.ShippingFee != "8.00" || o.Order.Amount != "67.00" || o.Order.ShippingAddress.RegionCode != "110101" {
				t.Fatalf("the order placed from the cart (%s): %+v", st.Code, o)
			}

			// Paid (the mock provider) and shipped (the admin API); then "My orders".
			if out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", st.OrderSn, "--amount", o.Order.Amount).CombinedOutput(); err != nil {
				t.Fatalf("notify: %v %s", err, out)
			}
			decode(t, s.Query(t, s.AdminToken, `mutation($sn: String!) { shipOrder(input: {orderSn: $sn, carrier: "顺丰", trackingNo: "SF8001"}) { status } }`,
				map[string]any{"sn": st.OrderSn}), &struct{}{})
			b.click("[data-testid=orders-link]")
			sn := st.OrderSn
			st = b.shipSettle("my orders", func(s *shipState) bool { return len(s.Orders) > 0 })
			if st.Orders[0].Sn != sn || st.Orders[0].Status != "SHIPPED" || !strings.Contains(st.Orders[0].Shipments, "SF8001") ||
				!strings.Contains(st.Orders[0].Summary, "shipping ¥8.00") {
				t.Fatalf("my orders: %+v", st.Orders)
			}
			b.click(`[data-testid=order][data-order-sn="` + sn + `"] [data-testid=confirm-receipt]`)
			st = b.shipSettle("receipt confirmed", func(s *shipState) bool { return len(s.Orders) > 0 && s.Orders[0].Status == "COMPLETED" })
			if st.OrdersCode != "" {
				t.Errorf("confirming receipt: %s", st.OrdersCode)
			}
			var done struct{ Order struct{ Status string } }
			decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { status } }`, map[string]any{"sn": sn}), &done)
			if done.Order.Status != "COMPLETED" {
				t.Errorf("after the button the order is %s", done.Order.Status)
			}
		})
	}
}
