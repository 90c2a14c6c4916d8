package e2e

import (
	"os/exec"
	"strings"
	"testing"

	"storefront/internal/testdb"
)

// A new user's payment by hand: place an order over HTTP, pay it with
// `storefront notify` (signed with the demo mock secret), replay the same
// notification, refund it as admin, and reconcile with `storefront reconcile`.
func TestPaymentFlowOverHTTP(t *testing.T) {
	for _, b := range []testdb.Backend{testdb.SQLite, testdb.MySQL} {
		t.Run(string(b), func(t *testing.T) {
			db := testdb.Spec(t, b)
			s := Start(t, db)
			id, stock := tshirtSku(t, s, "黑色,L")
			var p placed
			decode(t, s.queryWithKey(t, s.CustomerToken, "pay-e2e-1", placeOrder,
				map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 2}}}), &p)
			sn, amount := p.PlaceOrder.OrderSn, p.PlaceOrder.Amount

			notify := func(event string) string {
				out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", amount,
					"--payment-id", "pay-"+sn, "--event-id", event).CombinedOutput()
				if err != nil {
					t.Fatalf("storefront notify: %v\n%s", err, out)
				}
				return string(out)
			}
			if out := notify("evt-1"); !strings.Contains(out, "HTTP 200 success") {
				t.Fatalf("notify: %s", out)
			}
			notify("evt-1") // the provider's repeat: acknowledged, nothing runs again

			const orderQ = `query($sn: String!) { order(orderSn: $sn) { status payment { status provider paymentId amount } } }`
			var o struct {
				Order struct {
					Status  string
					Payment struct{ Status, Provider, PaymentID, Amount string }
				}
			}
			decode(t, s.Query(t, s.CustomerToken, orderQ, map[string]any{"sn": sn}), &o)
			if o.Order.Status != "PAID" || o.Order.Payment.Status != "PAID" || o.Order.Payment.Amount != amount {
				t.Fatalf("after payment: %+v", o.Order)
			}
			// A late redirect never downgrades the payment.
			ret := s.Query(t, s.CustomerToken, `mutation($sn: String!, $pid: String!) { paymentReturn(input: {provider: "mock", paymentId: $pid, orderSn: $sn}) { status } }`,
				map[string]any{"sn": sn, "pid": "pay-" + sn})
			if len(ret.Errors) > 0 || !strings.Contains(string(ret.Data), `"PAID"`) {
				t.Errorf("late redirect: %s %+v", ret.Data, ret.Errors)
			}
			// A forged notification (wrong secret) is refused.
			out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", amount, "--secret", "wrong").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "HTTP 401 fail") {
				t.Errorf("forged notification: err %v, output %s", err, out)
			}

			refund := `mutation($sn: String!) { refundOrder(orderSn: $sn, reason: "e2e") { status } }`
			if r := s.Query(t, s.CustomerToken, refund, map[string]any{"sn": sn}); r.Code() != "FORBIDDEN" {
				t.Errorf("customer refund: code %q", r.Code())
			}
			if r := s.Query(t, s.AdminToken, refund, map[string]any{"sn": sn}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), "REFUNDED") {
				t.Fatalf("admin refund: %s %+v", r.Data, r.Errors)
			}
			if got := balance(t, s, id); got != stock {
				t.Errorf("ledger balance after refund = %d, want %d", got, stock)
			}
			s.Stop(t)
			out, err = exec.Command(binary(t), "reconcile", "--db", db).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "0 SKU(s) differ") {
				t.Errorf("reconcile: %v\n%s", err, out)
			}
		})
	}
}
