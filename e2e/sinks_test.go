package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/events"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// Webhooks go on while NATS fails, whichever way it fails (issue 38): the
// stream deleted while serve runs, the stream full (a max-msgs limit that
// refuses new messages: "maximum messages exceeded"), or the server
// unreachable (serve pointed at a port where nothing listens; the shared
// NATS server stays up for the other tests). Each sink has its lane of the
// outbox: before, the webhooks were queued only after NATS took an event,
// so they stopped with it (22 s with NATS stopped; forever while the stream
// was full or missing). A deleted stream is also made again and takes the
// events that came after.
func TestWebhooksGoOnWhenNATSFails(t *testing.T) {
	url := natsURL(t)
	for _, b := range testdb.Backends {
		for _, fault := range []string{"deleted", "full", "unreachable"} {
			t.Run(string(b)+"/"+fault, func(t *testing.T) {
				spec := testdb.Spec(t, b)
				ns := newEventStream(t, url)
				args := append(ns.args(url), "--webhook-allow-private", "--outbox-interval", "100ms")
				const full = 5
				switch fault {
				case "full":
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					if _, err := ns.js.CreateStream(ctx, jetstream.StreamConfig{Name: ns.Name, Subjects: []string{ns.Prefix + ".>"},
						Storage: jetstream.MemoryStorage, MaxMsgs: full, Discard: jetstream.DiscardNew, Duplicates: events.DuplicateWindow}); err != nil {
						t.Fatal(err)
					}
				case "unreachable":
					args = append(args, "--events-nats", "nats://"+freeAddr(t))
				}
				s := Start(t, spec, args...)
				rec := newReceiver(t)
				rec.subscribe(t, s, "OrderPlaced")
				id := setStockTo(t, s, "黑色,L", 100000)
				placed := func() int {
					got, _, _, _ := rec.snapshot()
					n := 0
					rec.mu.Lock()
					for e := range got {
						if rec.types[e] == "OrderPlaced" {
							n++
						}
					}
					rec.mu.Unlock()
					return n
				}

				want := 0
				if fault == "deleted" {
					// Both sinks working first; then the stream goes.
					want += len(placeRound(t, s.URL, id, "before", 10))
					wait.Within(t, "the first orders in the stream and at the webhook", 30*time.Second, func() bool {
						return ns.count(t) >= want && placed() >= want
					})
					ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
					defer cancel()
					if err := ns.js.DeleteStream(ctx, ns.Name); err != nil {
						t.Fatal(err)
					}
				}
				start := time.Now()
				sns := placeRound(t, s.URL, id, "during", 20)
				want += len(sns)
				wait.Within(t, fmt.Sprintf("%d OrderPlaced events at the webhook while NATS is %s", want, fault), 20*time.Second, func() bool {
					return placed() >= want
				})
				t.Logf("NATS %s: the webhook got the %d orders' events %v after the first was placed", fault, len(sns), time.Since(start).Round(time.Millisecond))
				_, _, bad, _ := rec.snapshot()
				for _, e := range bad {
					t.Error(e)
				}

				lane := func(name string) float64 {
					v, err := strconv.ParseFloat(metricValue(t, s, `storefront_outbox_lane_pending_events{lane="`+name+`"}`), 64)
					if err != nil {
						t.Fatalf("lane %s's pending events on /metrics: %v", name, err)
					}
					return v
				}
				switch fault {
				case "deleted":
					// Made again: the stream holds the orders placed after.
					wait.Within(t, "the stream made again with the later orders' events", 20*time.Second, func() bool {
						evs := ns.count(t)
						return evs >= len(sns)
					})
					seen := map[string]bool{}
					for _, e := range ns.all(t) {
						seen[e.OrderSn] = true
					}
					for _, sn := range sns {
						if !seen[sn] {
							t.Errorf("order %s placed after the stream was deleted is not in the new stream", sn)
						}
					}
				default:
					// The broker's lane holds the events the webhooks' lane
					// took long ago: /metrics tells the two apart.
					wait.Within(t, fmt.Sprintf("the webhooks' lane empty and at least %d events in the broker's on /metrics", want-full), 10*time.Second, func() bool {
						return lane("webhooks") == 0 && lane("broker") >= float64(want-full)
					})
					if fault == "full" {
						if n := ns.count(t); n != full {
							t.Errorf("the full stream holds %d messages, want its limit %d", n, full)
						}
					}
				}
			})
		}
	}
}

// placeRound places n one-unit orders of item id from 4 buyers, keys
// tagged by round so that rounds never replay each other; any failure
// fails the test. It returns the order numbers.
func placeRound(t *testing.T, url, id, round string, n int) []string {
	t.Helper()
	var (
		mu   sync.Mutex
		sns  []string
		errs []string
		wg   sync.WaitGroup
	)
	for w := range 4 {
		tok := tokenFor(t, fmt.Sprintf("sinks-%d", w), auth.Customer)
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				r, _, err := post(context.Background(), url, tok, fmt.Sprintf("sinks-%s-%d", round, i), placeOrder,
					map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
				var p placed
				mu.Lock()
				switch {
				case err != nil:
					errs = append(errs, err.Error())
				case len(r.Errors) > 0 || json.Unmarshal(r.Data, &p) != nil:
					errs = append(errs, fmt.Sprintf("%+v", r.Errors))
				default:
					sns = append(sns, p.PlaceOrder.OrderSn)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d of %d orders failed, first: %s", len(errs), n, errs[0])
	}
	return sns
}
