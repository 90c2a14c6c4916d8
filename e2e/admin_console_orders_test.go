package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"storefront/internal/testsupport/testdb"
)

// The console's Orders page in Chromium, on every backend: the list and
// its status filter (against the API's count), an order's lines, address
// and payments, and two shipments through its Ship form, each read back
// through GraphQL. Driven by roles and accessible names, as the goods
// editor's test is.
func TestAdminConsoleOrders(t *testing.T) {
	for _, backend := range testdb.Backends {
		t.Run(string(backend), func(t *testing.T) {
			b := startBrowser(t)
			s := Start(t, testdb.Spec(t, backend))
			requireConsole(t, s)
			var demo struct {
				Goods struct {
					Skus []struct{ ID, SpecValueStr string }
				}
				MyAddresses []struct{ ID string }
			}
			decode(t, s.Query(t, s.CustomerToken, `{ goods(slug: "demo-bottle") { skus { id specValueStr } } myAddresses { id } }`, nil), &demo)
			small, large := demo.Goods.Skus[0], demo.Goods.Skus[1]
			var paid, unpaid struct {
				PlaceOrder struct{ OrderSn, Amount string }
			}
			place := `mutation($items: [OrderItemInput!]!, $a: ID) { placeOrder(input: {items: $items, addressId: $a}) { orderSn amount } }`
			decode(t, s.Query(t, s.CustomerToken, place, map[string]any{"a": demo.MyAddresses[0].ID,
				"items": []map[string]any{{"itemId": small.ID, "quantity": 2}, {"itemId": large.ID, "quantity": 1}}}), &paid)
			tshirt, _ := tshirtSku(t, s, "黑色,L")
			decode(t, s.Query(t, s.CustomerToken, place, map[string]any{"items": []map[string]any{{"itemId": tshirt, "quantity": 1}}}), &unpaid)
			sn := paid.PlaceOrder.OrderSn
			if out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", paid.PlaceOrder.Amount).CombinedOutput(); err != nil {
				t.Fatalf("notify: %v %s", err, out)
			}

			signIn(t, b, s)
			b.clickEl(b.byRole("link", "Orders"))
			b.byRole("link", sn)
			b.byRole("link", unpaid.PlaceOrder.OrderSn)
			if got := b.regionText("main"); !strings.Contains(got, "2 orders") {
				t.Errorf("the list says %q, want 2 orders", excerpt(got, "orders"))
			}
			b.uniqueNames("the orders page")
			b.clickEl(b.byRole("checkbox", "paid"))
			b.press("Filter")
			b.waitFor("the paid orders", 20e9, func() (bool, error) {
				return b.absent("link", unpaid.PlaceOrder.OrderSn) && !b.absent("link", sn), nil
			})
			var api struct{ Orders struct{ TotalCount int } }
			decode(t, s.Query(t, s.AdminToken, `{ orders(filter: {status: [PAID]}) { totalCount } }`, nil), &api)
			if got := b.regionText("main"); api.Orders.TotalCount != 1 || !strings.Contains(got, "1 order") {
				t.Errorf("filtered: the page says %q, the API counts %d", excerpt(got, "order"), api.Orders.TotalCount)
			}

			b.clickEl(b.byRole("link", sn))
			b.byRole("heading", "Order "+sn)
			main := b.regionText("main")
			for _, want := range []string{"徐汇区", "mock", "shipping ¥6.00", "不锈钢保温水杯 500ml"} {
				if !strings.Contains(main, want) {
					t.Errorf("the order's page lacks %q: %q", want, excerpt(main, "Order"))
				}
			}
			b.uniqueNames("the order's page")
			quantity := func(name, v string) {
				el := b.byRole("spinbutton", "Quantity of 不锈钢保温水杯 "+name)
				b.cmd("POST", "/element/"+el+"/clear", map[string]any{}, nil)
				b.cmd("POST", "/element/"+el+"/value", map[string]any{"text": v}, nil)
			}
			b.fill("Carrier", "顺丰")
			b.fill("Tracking number", "SF9001")
			quantity(small.SpecValueStr, "1")
			quantity(large.SpecValueStr, "0")
			b.press("Ship")
			b.waitRegion("status", "Shipped: the order is partially shipped")
			var o struct {
				Order struct {
					Status    string
					Shipments []struct {
						Carrier, TrackingNo string
						Lines               []struct {
							ItemID   string
							Quantity int
						}
					}
				}
			}
			read := func() {
				decode(t, s.Query(t, s.AdminToken, `query($sn: String!) { order(orderSn: $sn) { status shipments { carrier trackingNo lines { itemId quantity } } } }`,
					map[string]any{"sn": sn}), &o)
			}
			read()
			if o.Order.Status != "PARTIALLY_SHIPPED" || len(o.Order.Shipments) != 1 || o.Order.Shipments[0].TrackingNo != "SF9001" ||
				len(o.Order.Shipments[0].Lines) != 1 || o.Order.Shipments[0].Lines[0].ItemID != small.ID || o.Order.Shipments[0].Lines[0].Quantity != 1 {
				t.Fatalf("after the first shipment: %+v", o.Order)
			}
			// What is left, as the form offers it.
			b.fill("Carrier", "顺丰")
			b.fill("Tracking number", "SF9002")
			b.press("Ship")
			b.waitRegion("status", "Shipped: the order is shipped")
			read()
			if o.Order.Status != "SHIPPED" || len(o.Order.Shipments) != 2 || len(o.Order.Shipments[1].Lines) != 2 {
				t.Errorf("after the second shipment: %+v", o.Order)
			}
			if !b.absent("button", "Ship") {
				t.Errorf("a shipped order still offers the Ship form")
			}
		})
	}
}
