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

// Issue 43's pages in Chromium through the real binary (serve --demo): the
// shopper asks on /shop/orders, the admin decides on the console's
// After-sales page (found by role and accessible name, as the console's other
// tests do), and every outcome is read back through the API as well.

// asOrder is a paid order of the demo bottle, placed and paid through the
// API (the mock provider's notification), as the other browser tests pay.
type asOrder struct {
	Sn, Amount string
	Lines      []struct {
		ItemID, GoodsName, SpecValueStr, UnitPrice string
		Quantity                                   int
	}
}

func paidBottleOrder(t *testing.T, s *Server, ship bool) *asOrder {
	t.Helper()
	var demo struct {
		Goods       struct{ Skus []struct{ ID string } }
		MyAddresses []struct{ ID string }
	}
	decode(t, s.Query(t, s.CustomerToken, `{ goods(slug: "demo-bottle") { skus { id } } myAddresses { id } }`, nil), &demo)
	if len(demo.Goods.Skus) < 2 || len(demo.MyAddresses) == 0 {
		t.Fatalf("the demo: %+v", demo)
	}
	var p struct {
		PlaceOrder struct{ OrderSn, Amount string }
	}
	decode(t, s.Query(t, s.CustomerToken, `mutation($items: [OrderItemInput!]!, $a: ID) { placeOrder(input: {items: $items, addressId: $a}) { orderSn amount } }`,
		map[string]any{"a": demo.MyAddresses[0].ID, "items": []map[string]any{
			{"itemId": demo.Goods.Skus[0].ID, "quantity": 2}, {"itemId": demo.Goods.Skus[1].ID, "quantity": 1}}}), &p)
	sn := p.PlaceOrder.OrderSn
	if out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", p.PlaceOrder.Amount).CombinedOutput(); err != nil {
		t.Fatalf("notify: %v %s", err, out)
	}
	if ship {
		decode(t, s.Query(t, s.AdminToken, `mutation($sn: String!) { shipOrder(input: {orderSn: $sn, carrier: "顺丰", trackingNo: "SF7001"}) { status } }`,
			map[string]any{"sn": sn}), &struct{}{})
	}
	var o struct{ Order asOrder }
	decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { amount lines { itemId goodsName specValueStr unitPrice quantity } } }`,
		map[string]any{"sn": sn}), &o)
	o.Order.Sn = sn
	return &o.Order
}

// asAPI is the order's after-sales and refunded amount as the API reads them.
type asAPI struct {
	Status, RefundedAmount string
	AfterSales             []struct {
		ID, Type, Status, Amount, RejectReason, ReturnCarrier, ReturnTrackingNo string
		Lines                                                                   []struct {
			ItemID   string
			Quantity int
			Amount   string
		}
	}
}

func orderAfterSales(t *testing.T, s *Server, sn string) asAPI {
	t.Helper()
	var d struct{ Order asAPI }
	decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { status refundedAmount
		afterSales { id type status amount rejectReason returnCarrier returnTrackingNo lines { itemId quantity amount } } } }`,
		map[string]any{"sn": sn}), &d)
	return d.Order
}

// shopAS is what My orders shows of one order's after-sales.
type shopAS struct {
	Busy, Found, Form                     bool
	Status, Refunded, FormError, FormCode string
	PageStatus, PageCode                  string
	AfterSales                            []struct{ ID, Status, Amount, Type, RejectReason, Parcel string }
}

const readShopAS = `const o = document.querySelector('[data-testid=order][data-order-sn="' + arguments[0] + '"]');
const ps = document.querySelector("[data-testid=orders-status]");
const base = { busy: document.getElementById("app").getAttribute("aria-busy") === "true",
  pageStatus: ps ? ps.textContent : "", pageCode: (ps && ps.dataset.code) || "" };
if (!o) return Object.assign(base, { found: false });
const r = o.querySelector("[data-testid=order-refunded]");
const e = o.querySelector("[data-testid=after-sale-error]");
return Object.assign(base, { found: true, status: o.dataset.status, refunded: r ? r.dataset.amount : "",
  form: !!o.querySelector("[data-testid=after-sale-form]"),
  formError: e ? e.textContent : "", formCode: (e && e.dataset.code) || "",
  afterSales: [...o.querySelectorAll("[data-testid=after-sale]")].map((a) => ({ id: a.dataset.id, status: a.dataset.status,
    amount: a.dataset.amount, type: a.dataset.type,
    rejectReason: (a.querySelector("[data-testid=reject-reason]") || {}).textContent || "",
    parcel: (a.querySelector("[data-testid=return-parcel]") || {}).textContent || "" })) });`

// shopSettle waits until the order's entry on My orders, idle, meets cond.
func (b *browser) shopSettle(sn, what string, cond func(*shopAS) bool) *shopAS {
	b.t.Helper()
	var st *shopAS
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(readShopAS, &raw, sn)
		st = nil
		if err := json.Unmarshal(raw, &st); err != nil || st == nil {
			return false, err
		}
		return !st.Busy && st.Found && cond(st), fmt.Errorf("the page shows %+v", *st)
	})
	return st
}

// myOrders opens My orders afresh and waits for the order's entry: every
// check of the shopper's side reads a page loaded after what it checks.
func (b *browser) myOrdersPage(s *Server, sn string) *shopAS {
	b.t.Helper()
	b.navigate(s.URL + "/shop/orders")
	return b.shopSettle(sn, "the order on My orders", func(*shopAS) bool { return true })
}

// requestOnShop fills "Request a refund / return" of the order: units of
// one line, the type and a reason, and sends it; it returns the new
// after-sale's id as the page lists it.
func (b *browser) requestOnShop(s *Server, sn, itemID string, units int, typ, reason string) string {
	b.t.Helper()
	st := b.myOrdersPage(s, sn)
	before := len(st.AfterSales)
	in := `[data-testid=order][data-order-sn="` + sn + `"] `
	b.click(in + "[data-testid=after-sale-open]")
	b.shopSettle(sn, "the request form", func(st *shopAS) bool { return st.Form })
	qty := b.find(in + `[data-testid=after-sale-qty][data-item-id="` + itemID + `"]`)
	b.cmd("POST", "/element/"+qty+"/clear", map[string]any{}, nil)
	b.cmd("POST", "/element/"+qty+"/value", map[string]any{"text": fmt.Sprint(units)}, nil)
	b.click(in + `input[type=radio][value=` + typ + `]`)
	b.cmd("POST", "/element/"+b.find(in+"[data-testid=after-sale-reason]")+"/value", map[string]any{"text": reason}, nil)
	b.click(in + "[data-testid=after-sale-send]")
	st = b.shopSettle(sn, "the request listed", func(st *shopAS) bool {
		if st.FormError != "" {
			b.t.Fatalf("the request was refused: %s", st.FormError)
		}
		return len(st.AfterSales) == before+1
	})
	a := st.AfterSales[len(st.AfterSales)-1] // oldest first
	if a.Status != "REQUESTED" || a.Type != typ || !strings.Contains(st.PageStatus, a.ID) {
		b.t.Fatalf("after sending: %+v (status %q)", a, st.PageStatus)
	}
	return a.ID
}

// afterSalesPage opens the console's After-sales page (signing in the first
// time) and waits until its list loaded; the status filter starts at
// REQUESTED.
func (b *browser) afterSalesPage(s *Server, signedIn *bool) {
	b.t.Helper()
	if !*signedIn {
		signIn(b.t, b, s)
		*signedIn = true
	} else {
		b.navigate(s.URL + "/admin/")
	}
	b.clickEl(b.byRole("link", "After-sales"))
	b.byRole("heading", "After-sales")
	b.consoleIdle("the after-sales loaded")
}

// consoleIdle waits until the console's route finished (main's aria-busy).
func (b *browser) consoleIdle(what string) {
	b.t.Helper()
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var busy string
		b.exec(`return document.getElementById("app").getAttribute("aria-busy") || "";`, &busy)
		return busy == "false", fmt.Errorf("aria-busy=%q", busy)
	})
}

// (a) A refund of one unit of a paid order's line: asked for on /shop/, approved
// on the console, REFUNDED on the shopper's page with refundedAmount exactly
// the line's unit amount (no discount: its unit price); the order stays PAID.
func TestBrowserAfterSaleRefund(t *testing.T) {
	for _, backend := range testdb.Backends {
		t.Run(string(backend), func(t *testing.T) {
			b := startBrowser(t)
			s := Start(t, testdb.Spec(t, backend))
			requireConsole(t, s)
			o := paidBottleOrder(t, s, false)
			line := o.Lines[0] // 2 units
			id := b.requestOnShop(s, o.Sn, line.ItemID, 1, "REFUND_ONLY", "多买了一个")
			api := orderAfterSales(t, s, o.Sn)
			if len(api.AfterSales) != 1 || api.AfterSales[0].ID != id || api.AfterSales[0].Amount != line.UnitPrice ||
				len(api.AfterSales[0].Lines) != 1 || api.AfterSales[0].Lines[0].Quantity != 1 {
				t.Fatalf("the API after the request: %+v (unit price %s)", api, line.UnitPrice)
			}

			var signedIn bool
			b.afterSalesPage(s, &signedIn)
			b.byRole("heading", "After-sale "+id)
			main := b.regionText("main")
			for _, want := range []string{o.Sn, "refund only", "requested", "¥" + line.UnitPrice, "多买了一个", line.GoodsName + " " + line.SpecValueStr} {
				if !strings.Contains(main, want) {
					t.Errorf("the After-sales page lacks %q: %q", want, excerpt(main, "After-sale "+id))
				}
			}
			b.uniqueNames("the After-sales page")
			b.press("Approve " + id)
			b.waitRegion("status", "After-sale "+id+" is now refund") // refunding, or refunded when the mock answered first
			b.waitFor("the refund confirmed", 20*time.Second, func() (bool, error) {
				api = orderAfterSales(t, s, o.Sn)
				return api.AfterSales[0].Status == "REFUNDED", fmt.Errorf("%+v", api)
			})

			st := b.myOrdersPage(s, o.Sn)
			if len(st.AfterSales) != 1 || st.AfterSales[0].Status != "REFUNDED" || st.AfterSales[0].Amount != line.UnitPrice {
				t.Errorf("My orders shows %+v, want %s REFUNDED of %s", st.AfterSales, id, line.UnitPrice)
			}
			if st.Refunded != line.UnitPrice || api.RefundedAmount != line.UnitPrice || api.Status != "PAID" || st.Status != "PAID" {
				t.Errorf("refunded: the page %q, the API %q (order %s, page %s); want exactly the unit price %s, the order PAID",
					st.Refunded, api.RefundedAmount, api.Status, st.Status, line.UnitPrice)
			}
		})
	}
}

// (b) A return: requested on /shop/ for a shipped order, approved on the
// console, the parcel's carrier and tracking number entered on /shop/, shown
// on the console (RETURN_SHIPPED filter), received there: REFUNDED.
func TestBrowserAfterSaleReturn(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	requireConsole(t, s)
	o := paidBottleOrder(t, s, true)
	line := o.Lines[1] // 1 unit
	id := b.requestOnShop(s, o.Sn, line.ItemID, 1, "RETURN_AND_REFUND", "颜色不对")

	var signedIn bool
	b.afterSalesPage(s, &signedIn)
	b.byRole("heading", "After-sale "+id)
	b.press("Approve " + id)
	b.waitRegion("status", "After-sale "+id+" is now approved")
	if !b.absent("button", "Receive return "+id) {
		t.Errorf("an approved return not yet sent back offers Receive return")
	}

	st := b.myOrdersPage(s, o.Sn)
	if len(st.AfterSales) != 1 || st.AfterSales[0].Status != "APPROVED" {
		t.Fatalf("My orders after the approval: %+v", st.AfterSales)
	}
	in := `[data-testid=order][data-order-sn="` + o.Sn + `"] [data-testid=return-form] `
	b.cmd("POST", "/element/"+b.find(in+"[name=carrier]")+"/value", map[string]any{"text": "圆通"}, nil)
	b.cmd("POST", "/element/"+b.find(in+"[name=trackingNo]")+"/value", map[string]any{"text": "YT12345"}, nil)
	b.click(in + "[data-testid=return-shipped]")
	st = b.shopSettle(o.Sn, "the return sent", func(st *shopAS) bool {
		return len(st.AfterSales) == 1 && st.AfterSales[0].Status == "RETURN_SHIPPED"
	})
	if st.PageCode != "" || !strings.Contains(st.AfterSales[0].Parcel, "圆通") || !strings.Contains(st.AfterSales[0].Parcel, "YT12345") {
		t.Errorf("My orders after sending the return: %+v (%s)", st.AfterSales[0], st.PageStatus)
	}
	if api := orderAfterSales(t, s, o.Sn); api.AfterSales[0].ReturnCarrier != "圆通" || api.AfterSales[0].ReturnTrackingNo != "YT12345" {
		t.Errorf("the API's return parcel: %+v", api.AfterSales[0])
	}

	b.afterSalesPage(s, &signedIn) // a fresh page: REQUESTED, which it no longer is
	if !b.absent("heading", "After-sale "+id) {
		t.Errorf("the REQUESTED queue lists a RETURN_SHIPPED after-sale")
	}
	b.selectOption("Status", "return shipped")
	b.press("Show")
	b.byRole("button", "Receive return "+id)
	if main := b.regionText("main"); !strings.Contains(main, "Returned by 圆通, tracking number YT12345") {
		t.Errorf("the console does not show the parcel: %q", excerpt(main, "After-sale "+id))
	}
	b.uniqueNames("the After-sales page, RETURN_SHIPPED")
	b.press("Receive return " + id)
	b.waitRegion("status", "After-sale "+id+" is now refund")
	var api asAPI
	b.waitFor("the return refunded", 20*time.Second, func() (bool, error) {
		api = orderAfterSales(t, s, o.Sn)
		return api.AfterSales[0].Status == "REFUNDED", fmt.Errorf("%+v", api)
	})
	st = b.myOrdersPage(s, o.Sn)
	if st.AfterSales[0].Status != "REFUNDED" || st.Refunded != line.UnitPrice || api.RefundedAmount != line.UnitPrice {
		t.Errorf("after the return: the page %+v refunded %q, the API %q; want REFUNDED and %s", st.AfterSales[0], st.Refunded, api.RefundedAmount, line.UnitPrice)
	}
}

// (c) A rejection: the console refuses it without a reason (nothing sent),
// with one it is REJECTED and the shopper reads the reason; the units are
// free again, and a second request is withdrawn by the shopper (CANCELLED).
func TestBrowserAfterSaleReject(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	requireConsole(t, s)
	o := paidBottleOrder(t, s, false)
	line := o.Lines[0]
	id := b.requestOnShop(s, o.Sn, line.ItemID, 2, "REFUND_ONLY", "不想要了")

	var signedIn bool
	b.afterSalesPage(s, &signedIn)
	b.byRole("heading", "After-sale "+id)
	sent := func() int {
		var n int
		b.exec(`return performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/graphql")).length;`, &n)
		return n
	}
	before := sent()
	b.press("Reject " + id)
	if got := b.waitRegion("alert", "reason"); !strings.Contains(got, id) {
		t.Errorf("a rejection without a reason: %q", got)
	}
	if n := sent(); n != before {
		t.Errorf("a rejection without a reason sent %d requests; the page refuses it itself", n-before)
	}
	if api := orderAfterSales(t, s, o.Sn); api.AfterSales[0].Status != "REQUESTED" {
		t.Fatalf("a rejection without a reason changed it: %+v", api.AfterSales[0])
	}
	const why = "商品已拆封，不支持退款"
	b.fill("Reject reason for "+id, why)
	b.press("Reject " + id)
	b.waitRegion("status", "After-sale "+id+" is now rejected")
	if api := orderAfterSales(t, s, o.Sn); api.AfterSales[0].Status != "REJECTED" || api.AfterSales[0].RejectReason != why {
		t.Fatalf("the API after the rejection: %+v", api.AfterSales[0])
	}

	st := b.myOrdersPage(s, o.Sn)
	if len(st.AfterSales) != 1 || st.AfterSales[0].Status != "REJECTED" || !strings.Contains(st.AfterSales[0].RejectReason, why) || st.Refunded != "0.00" {
		t.Fatalf("My orders after the rejection: %+v refunded %q", st.AfterSales, st.Refunded)
	}

	// The rejected units can be asked for again; this one is withdrawn.
	again := b.requestOnShop(s, o.Sn, line.ItemID, 2, "REFUND_ONLY", "再试一次")
	b.click(`[data-testid=after-sale][data-id="` + again + `"] [data-testid=after-sale-cancel]`)
	st = b.shopSettle(o.Sn, "the request withdrawn", func(st *shopAS) bool {
		return len(st.AfterSales) == 2 && st.AfterSales[1].Status == "CANCELLED"
	})
	if st.PageCode != "" {
		t.Errorf("withdrawing: %s", st.PageStatus)
	}
	if api := orderAfterSales(t, s, o.Sn); api.AfterSales[1].Status != "CANCELLED" || api.RefundedAmount != "0.00" {
		t.Errorf("the API after withdrawing: %+v", api)
	}
}
