package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// recorded reads what a notification writes: the payment row's version,
// the payment_event rows and the outbox rows.
func recorded(t *testing.T, db *store.DB, paymentID string) [3]int {
	t.Helper()
	var r [3]int
	for i, q := range []string{"SELECT version FROM payment WHERE payment_id = ?", "SELECT COUNT(*) FROM payment_event", "SELECT COUNT(*) FROM outbox"} {
		args := []any{}
		if i == 0 {
			args = append(args, paymentID)
		}
		if err := db.SQL.QueryRow(q, args...).Scan(&r[i]); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return r
}

// A new user's payment by hand: place an order over HTTP, pay it with
// `storefront notify` (signed with the demo mock secret), replay the same
// notification, refund it as admin, and reconcile with `storefront reconcile`.
func TestPaymentFlowOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
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
			// The provider's repeat: acknowledged, and nothing runs again.
			dbh, err := store.Open(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			defer dbh.Close()
			before := recorded(t, dbh, "pay-"+sn)
			if out := notify("evt-1"); !strings.Contains(out, "HTTP 200 success") {
				t.Errorf("replayed notification: %s, want HTTP 200 success", out)
			}
			if after := recorded(t, dbh, "pay-"+sn); after != before {
				t.Errorf("the replay ran again: (payment version, payment events, outbox rows) %v -> %v", before, after)
			}

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
			// The money ledger: the charge and the refund, each once; admins only.
			const moneyQ = `query($sn: String!) { order(orderSn: $sn) { moneyLog { kind amount currency provider reference } } }`
			var m struct {
				Order struct {
					MoneyLog []struct{ Kind, Amount, Currency, Provider, Reference string }
				}
			}
			decode(t, s.Query(t, s.AdminToken, moneyQ, map[string]any{"sn": sn}), &m)
			if got := m.Order.MoneyLog; len(got) != 2 || got[0].Kind != "CHARGE" || got[0].Amount != amount || got[0].Reference != "pay-"+sn ||
				got[1].Kind != "REFUND" || got[1].Amount != "-"+amount || got[1].Provider != "mock" {
				t.Errorf("money log: %+v, want CHARGE %s and REFUND -%s", got, amount, amount)
			}
			if r := s.Query(t, s.CustomerToken, moneyQ, map[string]any{"sn": sn}); r.Code() != "FORBIDDEN" {
				t.Errorf("a customer's money log: code %q", r.Code())
			}
			s.Stop(t)
			out, err = exec.Command(binary(t), "reconcile", "--db", db).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "0 SKU(s) differ") || !strings.Contains(string(out), "0 order(s) whose money differs") {
				t.Errorf("reconcile: %v\n%s", err, out)
			}
		})
	}
}

// Issue 15, items 3 and 4 over HTTP: a payment id names one order (a
// redirect for A binds it; SUCCESS for B with it is refused), and a second
// payment for a paid order is kept, flagged and listed, while refundOrder
// refunds only the payment that paid the order.
func TestPaymentBindingAndDuplicatesOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			id, _ := tshirtSku(t, s, "黑色,L")
			order := func(key string, qty int) (string, string) {
				var p placed
				decode(t, s.queryWithKey(t, s.CustomerToken, key, placeOrder,
					map[string]any{"items": []map[string]any{{"itemId": id, "quantity": qty}}}), &p)
				return p.PlaceOrder.OrderSn, p.PlaceOrder.Amount
			}
			notify := func(sn, amount, pid, status string) (string, error) {
				out, err := exec.Command(binary(t), "notify", "--url", s.URL, "--order", sn, "--amount", amount,
					"--payment-id", pid, "--status", status).CombinedOutput()
				return string(out), err
			}
			const ret = `mutation($sn: String!, $pid: String!) { paymentReturn(input: {provider: "mock", paymentId: $pid, orderSn: $sn}) { status paymentId } }`
			const orderQ = `query($sn: String!) { order(orderSn: $sn) { status needsReview payment { paymentId status amount } payments { paymentId status amount } } }`
			type pay struct{ PaymentID, Status, Amount string }
			var o struct {
				Order struct {
					Status      string
					NeedsReview bool
					Payment     *pay
					Payments    []pay
				}
			}
			read := func(sn string) {
				t.Helper()
				o.Order.Payment, o.Order.Payments = nil, nil
				decode(t, s.Query(t, s.CustomerToken, orderQ, map[string]any{"sn": sn}), &o)
			}

			a, amountA := order("bind-a", 3)
			bsn, amountB := order("bind-b", 1)
			if r := s.Query(t, s.CustomerToken, ret, map[string]any{"sn": a, "pid": "PB-squat"}); len(r.Errors) > 0 || !strings.Contains(string(r.Data), "PENDING") {
				t.Fatalf("redirect for A: %s %+v", r.Data, r.Errors)
			}
			if out, err := notify(bsn, amountB, "PB-squat", "SUCCESS"); err == nil || !strings.Contains(out, "HTTP 400 fail") {
				t.Errorf("SUCCESS for B with A's payment id: %v %s, want HTTP 400 fail", err, out)
			}
			read(bsn)
			if o.Order.Status != "UNPAID" || o.Order.Payment != nil || len(o.Order.Payments) != 0 {
				t.Errorf("B after the refusal: %+v, want UNPAID with no payment", o.Order)
			}
			read(a)
			if o.Order.Status != "UNPAID" || o.Order.Payment == nil || o.Order.Payment.Status != "PENDING" {
				t.Errorf("A after the refusal: %+v, want UNPAID with its PENDING payment", o.Order)
			}
			if r := s.Query(t, s.CustomerToken, ret, map[string]any{"sn": bsn, "pid": "PB-squat"}); r.Code() != "INVALID_INPUT" {
				t.Errorf("redirect for B with A's payment id: code %q (%s), want INVALID_INPUT", r.Code(), r.Data)
			}

			for _, pid := range []string{"PB-1", "PB-2", "PB-3"} {
				if out, err := notify(bsn, amountB, pid, "SUCCESS"); err != nil {
					t.Fatalf("SUCCESS %s for B: %v %s", pid, err, out)
				}
			}
			read(bsn)
			if o.Order.Status != "PAID" || !o.Order.NeedsReview || o.Order.Payment == nil || o.Order.Payment.PaymentID != "PB-1" || len(o.Order.Payments) != 3 {
				t.Fatalf("B after three payments: %+v, want PAID, flagged, paid by PB-1, three payments", o.Order)
			}
			r := s.Query(t, s.AdminToken, `mutation($sn: String!) { refundOrder(orderSn: $sn, reason: "e2e") { status } }`, map[string]any{"sn": bsn})
			if len(r.Errors) > 0 {
				t.Fatalf("refund: %+v", r.Errors)
			}
			read(bsn)
			want := []pay{{"PB-1", "REFUNDED", amountB}, {"PB-2", "PAID", amountB}, {"PB-3", "PAID", amountB}}
			if o.Order.Status != "REFUNDED" || o.Order.Payment == nil || *o.Order.Payment != want[0] || len(o.Order.Payments) != 3 ||
				o.Order.Payments[0] != want[0] || o.Order.Payments[1] != want[1] || o.Order.Payments[2] != want[2] {
				t.Errorf("B after the refund: %+v, want REFUNDED, payment %v, payments %v", o.Order, want[0], want)
			}
			if out, err := notify(a, amountA, "PB-squat", "SUCCESS"); err != nil {
				t.Errorf("SUCCESS for A with its own payment id: %v %s", err, out)
			}
		})
	}
}
