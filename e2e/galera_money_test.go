//go:build galera

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// A paid order of 3 units, shipped one unit at a time through each of the
// three nodes while refundOrder runs through one of them, round after
// round: either the refund wins (nothing ships) or a shipment does (the
// refund is refused), never both; then reconcile proves stock and money on
// the cluster.
func TestGaleraShipmentsRaceRefundOrder(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	servers := serveOnEach(t, specs)
	s := servers[0]
	var demo struct {
		Goods       struct{ Skus []struct{ ID string } }
		MyAddresses []struct{ ID string }
	}
	decode(t, s.Query(t, s.CustomerToken, `{ goods(slug: "demo-bottle") { skus { id } } myAddresses { id } }`, nil), &demo)
	if len(demo.Goods.Skus) == 0 || len(demo.MyAddresses) == 0 {
		t.Fatalf("the demo: %+v", demo)
	}
	item, home := demo.Goods.Skus[0].ID, demo.MyAddresses[0].ID
	const ship = `mutation($sn: String!, $i: ID!, $t: String!) { shipOrder(input: {orderSn: $sn, carrier: "SF", trackingNo: $t, lines: [{itemId: $i, quantity: 1}]}) { status } }`
	for round := range 6 {
		var p struct {
			PlaceOrder struct{ OrderSn, Amount string }
		}
		decode(t, s.Query(t, s.CustomerToken, `mutation($i: ID!, $a: ID, $k: String) { placeOrder(input: {items: [{itemId: $i, quantity: 3}], addressId: $a}, idempotencyKey: $k) { orderSn amount } }`,
			map[string]any{"i": item, "a": home, "k": fmt.Sprint("galera-race-", round)}), &p)
		sn := p.PlaceOrder.OrderSn
		if out, _ := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", p.PlaceOrder.Amount, "--payment-id", "pay-"+sn).CombinedOutput(); !strings.Contains(string(out), "HTTP 200 success") {
			t.Fatalf("paying: %s", out)
		}
		var wg sync.WaitGroup
		shipped := make([]bool, len(servers))
		refunded := false
		for i, node := range servers {
			wg.Go(func() {
				r, _, err := post(context.Background(), node.URL, node.AdminToken, "", ship, map[string]any{"sn": sn, "i": item, "t": fmt.Sprint("SF", round, i)})
				shipped[i] = err == nil && len(r.Errors) == 0
				if !shipped[i] {
					t.Logf("round %d, node %d: shipOrder: %v %+v", round, i+1, err, r)
				}
			})
		}
		wg.Go(func() {
			node := servers[round%len(servers)]
			r, _, err := post(context.Background(), node.URL, node.AdminToken, "", `mutation($sn: String!) { refundOrder(orderSn: $sn, reason: "race") { status } }`, map[string]any{"sn": sn})
			switch {
			case err != nil:
				t.Errorf("round %d: refundOrder: %v", round, err)
			case len(r.Errors) == 0:
				refunded = true
			case r.Code() != "INVALID_ORDER_STATE":
				t.Errorf("round %d: refundOrder: %s %s", round, r.Code(), r.Errors[0].Message)
			}
		})
		wg.Wait()
		n := 0
		for _, ok := range shipped {
			if ok {
				n++
			}
		}
		var o struct {
			Order struct{ Status, Amount, RefundedAmount string }
		}
		decode(t, s.Query(t, s.AdminToken, `query($sn: String!) { order(orderSn: $sn) { status amount refundedAmount } }`, map[string]any{"sn": sn}), &o)
		switch {
		case refunded && (n > 0 || o.Order.Status != "REFUNDED"):
			t.Errorf("round %d: the refund answered success with %d shipments: %+v", round, n, o.Order)
		case !refunded && (n == 0 || o.Order.RefundedAmount != "0.00"):
			t.Errorf("round %d: the refund was refused with %d shipments: %+v", round, n, o.Order)
		}
	}
	for _, node := range servers {
		node.Stop(t)
	}
	out, err := exec.Command(binary(t), "reconcile", "--db", specs[0]).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "0 order(s) whose money differs") {
		t.Errorf("reconcile: %v\n%s", err, out)
	}
}
