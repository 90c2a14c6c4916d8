package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// Issue 41 through the real binary on every backend, with its events on
// NATS: the demo's water bottle, sold by weight under its freight
// template, ordered to the demo customer's address (the fee is in the
// amount), a notification of the amount before shipping refused and one of
// the whole amount paying it, two shipments, and the closer completing the
// order --auto-confirm-after later; OrderShipped twice and OrderCompleted
// once on the stream; the admin's order list finds it.
func TestShippingThroughTheBinary(t *testing.T) {
	url := natsURL(t)
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			ns := newEventStream(t, url)
			s := Start(t, testdb.Spec(t, b), append(ns.args(url), "--outbox-interval", "100ms",
				"--close-interval", "200ms", "--auto-confirm-after", "1500ms")...)
			var demo struct {
				Goods struct {
					ShippingTemplateID string
					Skus               []struct {
						ID          string
						WeightGrams int
					}
				}
				MyAddresses []struct {
					ID, RegionCode string
					IsDefault      bool
				}
			}
			decode(t, s.Query(t, s.CustomerToken, `{ goods(slug: "demo-bottle") { shippingTemplateId skus { id weightGrams } } myAddresses { id regionCode isDefault } }`, nil), &demo)
			if demo.Goods.ShippingTemplateID == "" || len(demo.Goods.Skus) != 2 || len(demo.MyAddresses) != 1 || demo.MyAddresses[0].RegionCode != "310104" {
				t.Fatalf("the demo's shipping: %+v", demo)
			}
			small, large, home := demo.Goods.Skus[0].ID, demo.Goods.Skus[1].ID, demo.MyAddresses[0].ID
			order := `mutation($items: [OrderItemInput!]!, $a: ID) { placeOrder(input: {items: $items, addressId: $a}) { orderSn amount shippingFee status } }`
			items := []map[string]any{{"itemId": small, "quantity": 2}, {"itemId": large, "quantity": 1}}
			wantCode(t, "the bottle without an address", s.Query(t, s.CustomerToken, order, map[string]any{"items": items}), "ADDRESS_REQUIRED")
			var p struct {
				PlaceOrder struct{ OrderSn, Amount, ShippingFee, Status string }
			}
			decode(t, s.Query(t, s.CustomerToken, order, map[string]any{"items": items, "a": home}), &p)
			sn := p.PlaceOrder.OrderSn
			// 2 × 350 g + 480 g = 1,180 g to Shanghai: 5.00 + 1.00; 197.00 + 6.00.
			if p.PlaceOrder.ShippingFee != "6.00" || p.PlaceOrder.Amount != "203.00" {
				t.Fatalf("order: %+v, want shipping 6.00 in 203.00", p.PlaceOrder)
			}
			notify := func(amount string) string {
				out, _ := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", amount, "--payment-id", "pay-"+sn+amount).CombinedOutput()
				return string(out)
			}
			if out := notify("197.00"); !strings.Contains(out, "fail") {
				t.Errorf("a notification of the amount before shipping: %s", out)
			}
			status := func() string {
				var o struct{ Order struct{ Status string } }
				decode(t, s.Query(t, s.AdminToken, `query($sn: String!) { order(orderSn: $sn) { status } }`, map[string]any{"sn": sn}), &o)
				return o.Order.Status
			}
			if st := status(); st != "UNPAID" {
				t.Fatalf("after the short notification the order is %s", st)
			}
			if out := notify("203.00"); !strings.Contains(out, "HTTP 200 success") {
				t.Fatalf("the whole amount: %s", out)
			}
			ship := `mutation($in: ShipOrderInput!) { shipOrder(input: $in) { status shipments { trackingNo } } }`
			var sh struct{ ShipOrder struct{ Status string } }
			decode(t, s.Query(t, s.AdminToken, ship, map[string]any{"in": map[string]any{"orderSn": sn, "carrier": "顺丰", "trackingNo": "SF1",
				"lines": []map[string]any{{"itemId": small, "quantity": 1}}}}), &sh)
			if sh.ShipOrder.Status != "PARTIALLY_SHIPPED" {
				t.Fatalf("first shipment: %+v", sh)
			}
			decode(t, s.Query(t, s.AdminToken, ship, map[string]any{"in": map[string]any{"orderSn": sn, "carrier": "顺丰", "trackingNo": "SF2"}}), &sh)
			if sh.ShipOrder.Status != "SHIPPED" {
				t.Fatalf("second shipment: %+v", sh)
			}
			// The closer completes it once --auto-confirm-after has passed.
			deadline := time.Now().Add(30 * time.Second)
			for status() != "COMPLETED" {
				if time.Now().After(deadline) {
					t.Fatalf("the order is still %s 30 s after it shipped (--auto-confirm-after 1500ms)", status())
				}
				time.Sleep(100 * time.Millisecond)
			}
			var l struct {
				Orders struct {
					TotalCount int
					Edges      []struct{ Node struct{ OrderSn string } }
				}
			}
			decode(t, s.Query(t, s.AdminToken, `{ orders(filter: {status: [COMPLETED]}) { totalCount edges { node { orderSn } } } }`, nil), &l)
			if l.Orders.TotalCount != 1 || l.Orders.Edges[0].Node.OrderSn != sn {
				t.Errorf("completed orders: %+v", l)
			}
			// Its events on NATS: placed, paid, shipped twice, completed once.
			want := map[string]int{"OrderPlaced": 1, "OrderPaid": 1, "OrderShipped": 2, "OrderCompleted": 1}
			var got map[string]int
			for end := time.Now().Add(30 * time.Second); ; {
				got = map[string]int{}
				for _, e := range ns.all(t) {
					if e.OrderSn == sn {
						got[e.CE.Type]++
					}
				}
				if len(got) == len(want) && got["OrderShipped"] == 2 && got["OrderCompleted"] == 1 || time.Now().After(end) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			for typ, n := range want {
				if got[typ] != n {
					t.Errorf("%s events of order %s on NATS: %d, want %d (all: %v)", typ, sn, got[typ], n, got)
				}
			}
		})
	}
}
