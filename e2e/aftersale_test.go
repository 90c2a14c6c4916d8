package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"storefront/internal/platform/auth"
	"storefront/internal/testsupport/testdb"
)

// Issue 43 through the real binary on every backend, with the mock
// provider (it confirms refunds at once): the demo bottle ordered to the
// demo address, paid, shipped; the buyer asks to send one unit back
// (RETURN_AND_REFUND), the admin approves, the buyer ships it back, the
// admin receives it: REFUNDED, its amount in Order.refundedAmount, the
// order still SHIPPED; a request for more than is left is INVALID_INPUT.
func TestAfterSaleThroughTheBinary(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			var demo struct {
				Goods       struct{ Skus []struct{ ID string } }
				MyAddresses []struct{ ID string }
			}
			decode(t, s.Query(t, s.CustomerToken, `{ goods(slug: "demo-bottle") { skus { id } } myAddresses { id } }`, nil), &demo)
			if len(demo.Goods.Skus) == 0 || len(demo.MyAddresses) == 0 {
				t.Fatalf("the demo: %+v", demo)
			}
			item, home := demo.Goods.Skus[0].ID, demo.MyAddresses[0].ID
			var p struct {
				PlaceOrder struct{ OrderSn, Amount string }
			}
			decode(t, s.Query(t, s.CustomerToken, `mutation($i: ID!, $a: ID) { placeOrder(input: {items: [{itemId: $i, quantity: 2}], addressId: $a}) { orderSn amount } }`,
				map[string]any{"i": item, "a": home}), &p)
			sn := p.PlaceOrder.OrderSn
			if out, _ := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", p.PlaceOrder.Amount, "--payment-id", "pay-"+sn).CombinedOutput(); !strings.Contains(string(out), "HTTP 200 success") {
				t.Fatalf("paying: %s", out)
			}
			var sh struct{ ShipOrder struct{ Status string } }
			decode(t, s.Query(t, s.AdminToken, `mutation($sn: String!) { shipOrder(input: {orderSn: $sn, carrier: "SF", trackingNo: "SF1"}) { status } }`,
				map[string]any{"sn": sn}), &sh)
			if sh.ShipOrder.Status != "SHIPPED" {
				t.Fatalf("shipping: %+v", sh)
			}
			const fields = `{ id status amount lines { itemId quantity amount } returnCarrier returnTrackingNo }`
			type afterSale struct {
				ID, Status, Amount, ReturnCarrier, ReturnTrackingNo string
				Lines                                               []struct{ ItemID, Amount string }
			}
			req := `mutation($in: RequestAfterSaleInput!) { requestAfterSale(input: $in, idempotencyKey: "as-1") ` + fields + ` }`
			in := map[string]any{"orderSn": sn, "type": "RETURN_AND_REFUND", "reason": "too big",
				"lines": []map[string]any{{"itemId": item, "quantity": 1}}}
			// Another customer's request for this order: FORBIDDEN.
			wantCode(t, "another customer's order", s.Query(t, tokenFor(t, "someone-else", auth.Customer),
				`mutation($in: RequestAfterSaleInput!) { requestAfterSale(input: $in) { id } }`, map[string]any{"in": in}), "FORBIDDEN")
			var r struct{ RequestAfterSale afterSale }
			decode(t, s.Query(t, s.CustomerToken, req, map[string]any{"in": in}), &r)
			a := r.RequestAfterSale
			if a.Status != "REQUESTED" || a.Amount == "" || a.Amount == "0.00" {
				t.Fatalf("request: %+v", a)
			}
			var again struct{ RequestAfterSale afterSale }
			decode(t, s.Query(t, s.CustomerToken, req, map[string]any{"in": in}), &again)
			if again.RequestAfterSale.ID != a.ID {
				t.Errorf("the same key answered %s, want %s", again.RequestAfterSale.ID, a.ID)
			}
			in["lines"] = []map[string]any{{"itemId": item, "quantity": 2}}
			wantCode(t, "more than is left", s.Query(t, s.CustomerToken, `mutation($in: RequestAfterSaleInput!) { requestAfterSale(input: $in) { id } }`, map[string]any{"in": in}), "INVALID_INPUT")
			wantCode(t, "a buyer approving", s.Query(t, s.CustomerToken, `mutation($id: ID!) { approveAfterSale(id: $id) { id } }`, map[string]any{"id": a.ID}), "FORBIDDEN")
			step := func(who, q string, vars map[string]any, want string) {
				t.Helper()
				var out map[string]afterSale
				decode(t, s.Query(t, who, q, vars), &out)
				for _, v := range out {
					if v.Status != want {
						t.Fatalf("%s: %+v, want %s", q, v, want)
					}
				}
			}
			id := map[string]any{"id": a.ID}
			step(s.AdminToken, `mutation($id: ID!) { approveAfterSale(id: $id) `+fields+` }`, id, "APPROVED")
			step(s.CustomerToken, `mutation($id: ID!) { returnShipped(id: $id, carrier: "YTO", trackingNo: "YT9") `+fields+` }`, id, "RETURN_SHIPPED")
			step(s.AdminToken, `mutation($id: ID!) { receiveReturn(id: $id) `+fields+` }`, id, "REFUNDED")
			step(s.AdminToken, `mutation($id: ID!) { receiveReturn(id: $id) `+fields+` }`, id, "REFUNDED")
			var o struct {
				Order struct {
					Status, RefundedAmount string
					AfterSales             []afterSale
					Refunds                []struct{ RefundNo, Status string }
				}
			}
			decode(t, s.Query(t, s.CustomerToken, `query($sn: String!) { order(orderSn: $sn) { status refundedAmount afterSales { id status amount } refunds { refundNo status } } }`,
				map[string]any{"sn": sn}), &o)
			if o.Order.Status != "SHIPPED" || o.Order.RefundedAmount != a.Amount || len(o.Order.AfterSales) != 1 ||
				len(o.Order.Refunds) != 1 || o.Order.Refunds[0].RefundNo != a.ID+"-R1" || o.Order.Refunds[0].Status != "SUCCEEDED" {
				t.Errorf("the order after the return: %+v (after-sale amount %s)", o.Order, a.Amount)
			}
			var q struct {
				AfterSales struct{ Edges []struct{ Node afterSale } }
			}
			decode(t, s.Query(t, s.AdminToken, `{ afterSales(first: 10, filter: {status: REFUNDED}) { edges { node { id status } } } }`, nil), &q)
			if len(q.AfterSales.Edges) != 1 || q.AfterSales.Edges[0].Node.ID != a.ID {
				t.Errorf("the admin's list of REFUNDED: %+v", q)
			}
		})
	}
}
