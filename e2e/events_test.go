package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// An order a client was told exists, and the token of its buyer.
type placedOrder struct{ Sn, Amount, Token string }

// placeMany places n one-unit orders of item id from workers goroutines,
// each worker its own customer; any failure fails the test.
func placeMany(t *testing.T, url, id string, n, workers int) []placedOrder {
	t.Helper()
	var (
		mu   sync.Mutex
		out  []placedOrder
		errs []string
		wg   sync.WaitGroup
	)
	next := make(chan int)
	go func() {
		for i := range n {
			next <- i
		}
		close(next)
	}()
	for w := range workers {
		tok := tokenFor(t, fmt.Sprintf("events-%d", w), auth.Customer)
		wg.Go(func() {
			for i := range next {
				r, _, err := post(context.Background(), url, tok, fmt.Sprintf("ev-%d-%d", w, i), placeOrder,
					map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
				var p placed
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case len(r.Errors) > 0 || json.Unmarshal(r.Data, &p) != nil:
					errs = append(errs, fmt.Sprintf("%+v", r.Errors))
				default:
					out = append(out, placedOrder{p.PlaceOrder.OrderSn, p.PlaceOrder.Amount, tok})
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d orders failed, first: %s", len(errs), n, errs[0])
	}
	return out
}

// notifyPaid sends the demo mock provider's signed SUCCESS for order sn.
func notifyPaid(url, sn, amount string) error {
	body, _ := json.Marshal(mock.Notification{EventID: "ev-" + sn, PaymentID: "pay-" + sn, OrderSn: sn, Amount: amount,
		Currency: "CNY", MerchantID: "mock-merchant", Status: "SUCCESS", Timestamp: time.Now().Unix()})
	req, err := http.NewRequest("POST", url+"/payments/mock/notify", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("X-Signature", mock.Sign("mock-secret", body))
	resp, err := loadClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(bytes.TrimSpace(raw)) != "success" {
		return fmt.Errorf("notify %s: HTTP %d %s", sn, resp.StatusCode, raw)
	}
	return nil
}

// Issue 29's main test, on both databases and both checkout paths (one
// transaction per order, and the group-commit batch whose one outbox row
// carries many orders' events): 300 orders, 50 paid by signed provider
// notifications, 20 cancelled. The stream then holds exactly one message
// per committed event, each a valid CloudEvent whose id is its Nats-Msg-Id,
// on <prefix>.<type>. A webhook subscribed to OrderPaid and OrderClosed
// gets exactly those 70 events, signatures verified, some refused with 500
// on their first attempt and delivered on a retry, as webhookDeliveries
// shows; a second webhook whose endpoint hangs 20 s on every request holds
// up none of it.
func TestEventsReachNATSAndWebhooks(t *testing.T) {
	url := natsURL(t)
	for _, b := range testdb.Backends {
		for _, path := range []string{"plain", "batch"} {
			t.Run(string(b)+"/"+path, func(t *testing.T) {
				spec := testdb.Spec(t, b)
				ns := newEventStream(t, url)
				paid, hang := newReceiver(t), newReceiver(t)
				// The first attempt of about a quarter of the events is refused.
				paid.refuse = func(id string) bool { return id[len(id)-1] < '4' }
				hang.hang = 20 * time.Second
				args := append(ns.args(url), "--group-commit="+fmt.Sprint(path == "batch"), "--webhook-allow-private",
					"--webhook-retry", "200ms,200ms,200ms", "--webhook-timeout", "30s", "--outbox-interval", "100ms")
				s := Start(t, spec, args...)

				if r := s.Query(t, s.CustomerToken, createWebhook, map[string]any{"in": map[string]any{"url": paid.URL, "events": []string{"OrderPaid"}}}); r.Code() != "FORBIDDEN" {
					t.Errorf("createWebhook as a customer: %s %+v, want FORBIDDEN", r.Data, r.Errors)
				}
				if r := s.Query(t, s.AdminToken, createWebhook, map[string]any{"in": map[string]any{"url": paid.URL, "events": []string{"OrderTeleported"}}}); r.Code() != "INVALID_INPUT" {
					t.Errorf("createWebhook of an unknown event type: %+v, want INVALID_INPUT", r.Errors)
				}
				paidID := paid.subscribe(t, s, "OrderPaid", "OrderClosed")
				hang.subscribe(t, s, "OrderPlaced")

				id := setStockTo(t, s, "黑色,L", 100000)
				orders := placeMany(t, s.URL, id, 300, 16)
				var wg sync.WaitGroup
				payErrs := make(chan error, 50)
				for _, o := range orders[:50] {
					wg.Go(func() { payErrs <- notifyPaid(s.URL, o.Sn, o.Amount) })
				}
				wg.Wait()
				close(payErrs)
				for err := range payErrs {
					if err != nil {
						t.Fatal(err)
					}
				}
				const cancel = `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`
				for _, o := range orders[50:70] {
					var c struct{ CancelOrder struct{ Status string } }
					decode(t, s.Query(t, o.Token, cancel, map[string]any{"sn": o.Sn}), &c)
					if c.CancelOrder.Status != "CLOSED" {
						t.Fatalf("cancelOrder %s: %s", o.Sn, c.CancelOrder.Status)
					}
				}

				const want = 300 + 50 + 20
				wait.Within(t, "370 events in the stream", 60*time.Second, func() bool { return ns.count(t) >= want })
				wait.Within(t, "the 70 paid and closed events at the webhook", 60*time.Second, func() bool {
					got, _, _, _ := paid.snapshot()
					return len(got) >= 70
				})
				// Everything above happened while every request to the
				// hanging endpoint was still held: nothing waited for it.
				if arrived, answered := hang.counts(); arrived == 0 || answered != 0 {
					t.Errorf("hanging endpoint: %d requests arrived, %d answered; want some, none answered yet", arrived, answered)
				}

				evs := ns.all(t)
				if len(evs) != want {
					t.Errorf("stream holds %d messages, want %d (one per committed event)", len(evs), want)
				}
				per := map[string]map[string]int{} // type → orderSn → messages
				ids := map[string]bool{}
				for _, e := range evs {
					if ids[e.CE.ID] {
						t.Errorf("event id %s twice in the stream", e.CE.ID)
					}
					ids[e.CE.ID] = true
					if per[e.CE.Type] == nil {
						per[e.CE.Type] = map[string]int{}
					}
					per[e.CE.Type][e.OrderSn]++
				}
				expect := func(typ string, os []placedOrder) {
					if len(per[typ]) != len(os) {
						t.Errorf("%s: events for %d orders, want %d", typ, len(per[typ]), len(os))
					}
					for _, o := range os {
						if per[typ][o.Sn] != 1 {
							t.Errorf("%s of %s: %d messages, want 1", typ, o.Sn, per[typ][o.Sn])
						}
					}
				}
				expect("OrderPlaced", orders)
				expect("OrderPaid", orders[:50])
				expect("OrderClosed", orders[50:70])
				if len(per) != 3 {
					t.Errorf("event types in the stream: %v", per)
				}

				got, refused, bad, _ := paid.snapshot()
				for _, b := range bad {
					t.Error(b)
				}
				for _, e := range evs {
					typ := e.CE.Type
					if (typ == "OrderPaid" || typ == "OrderClosed") != (got[e.CE.ID] == 1) {
						t.Errorf("webhook got %s %s %d times", typ, e.CE.ID, got[e.CE.ID])
					}
				}
				if len(got) != 70 || len(refused) == 0 || len(refused) == 70 {
					t.Errorf("webhook got %d events (want 70), %d refused once (want some, not all)", len(got), len(refused))
				}
				// The receiver counts an event when it answers; the sender records
				// the attempt after the answer reaches it: await the records.
				var ds []delivery
				wait.Within(t, "every webhook attempt recorded", 20*time.Second, func() bool {
					ds = deliveries(t, s, paidID)
					for _, d := range ds {
						if d.Status == "SENDING" {
							return false
						}
					}
					return len(ds) >= 70+len(refused)
				})
				if len(ds) != 70+len(refused) {
					t.Errorf("webhookDeliveries: %d attempts, want %d", len(ds), 70+len(refused))
				}
				for _, d := range ds {
					switch {
					case refused[d.EventID] && d.Attempt == 1:
						if d.Status != "FAILED" || d.HTTPStatus == nil || *d.HTTPStatus != 500 || d.NextAttemptAt == nil || d.Error == "" {
							t.Errorf("refused first attempt: %+v", d)
						}
					case refused[d.EventID] && d.Attempt == 2, !refused[d.EventID] && d.Attempt == 1:
						if d.Status != "DELIVERED" || d.HTTPStatus == nil || *d.HTTPStatus/100 != 2 || d.NextAttemptAt != nil {
							t.Errorf("delivered attempt: %+v", d)
						}
					default:
						t.Errorf("unexpected attempt: %+v", d)
					}
				}
			})
		}
	}
}
