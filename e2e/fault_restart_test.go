//go:build fault

package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// kill -9 of serve while it holds claims, then a restart on the same
// address (so the same default --instance-id): the restarted instance
// takes its claims back at start, and every event reaches its sinks within
// seconds instead of after the claims' leases (the outbox's ClaimLease, a
// minute; a webhook attempt's 30 s plus --webhook-timeout per slots' worth).
// Two ways to hold claims at the kill:
//
//   - "broker down": the instance's NATS server is down, and the dispatcher
//     holds outbox rows while it waits for it; NATS comes back with the
//     restart.
//   - "endpoint hanging": the webhook endpoint holds every request, and the
//     sender holds the attempts; it answers again with the restart.
//
// The delay is from the restart's launch (the binary's start, migrate and
// seeding included) to the last event at its sink (docs/benchmarks.md).
func TestFaultRestartTakesBackClaims(t *testing.T) {
	natsURL(t) // the same switch as the other NATS tests
	for _, b := range testdb.Backends {
		for _, how := range []string{"broker down", "endpoint hanging"} {
			t.Run(string(b)+"/"+strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
				spec := testdb.Spec(t, b)
				addr := freeAddr(t)
				natsAddr, natsDir := freeAddr(t), t.TempDir()
				var nats *natsServer
				if how == "endpoint hanging" {
					nats = startNATS(t, natsAddr, natsDir)
				}
				url := "nats://" + natsAddr
				tag := strings.ReplaceAll(strings.ReplaceAll(natsAddr, ".", ""), ":", "")
				stream, prefix := "RESTART_"+tag, "restart."+tag
				args := []string{"--events-nats", url, "--events-stream", stream, "--events-subject-prefix", prefix,
					"--webhook-allow-private", "--outbox-interval", "100ms", "--webhook-retry", "200ms"}

				s1 := StartAt(t, addr, spec, args...)
				rec := newReceiver(t)
				if how == "endpoint hanging" {
					rec.gate = make(chan struct{})
				}
				rec.subscribe(t, s1, "OrderPlaced")
				id := setStockTo(t, s1, "黑色,L", 100000)
				sns := placeRound(t, s1.URL, id, "restart", 20)

				db, err := store.Open(context.Background(), spec)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				held := func() (outbox, attempts int) {
					return liveClaims(t, db, "SELECT claimed_until FROM outbox WHERE dispatched_at IS NULL AND claimed_until IS NOT NULL"),
						liveClaims(t, db, "SELECT claimed_until FROM webhook_delivery WHERE status = 'SENDING' AND claimed_until IS NOT NULL")
				}
				wait.Within(t, "claims held mid-dispatch", 60*time.Second, func() bool {
					if how == "broker down" {
						o, _ := held()
						return o > 0
					}
					arrived, _ := rec.counts()
					return arrived >= min(len(sns), 16) // the webhook's slots (PerWebhook)
				})
				kill9(t, s1)
				o, a := held()
				t.Logf("killed holding %d outbox rows and %d webhook attempts", o, a)
				if (how == "broker down" && o == 0) || (how == "endpoint hanging" && a == 0) {
					t.Fatal("the kill came between claims: nothing to take back")
				}

				if how == "broker down" {
					nats = startNATS(t, natsAddr, natsDir)
				} else {
					close(rec.gate)
				}
				ns := streamOn(t, "nats://"+nats.addr, stream, prefix)
				restart := time.Now()
				s2 := StartAt(t, addr, spec, args...)
				ready := time.Since(restart)
				wait.Within(t, "every order's OrderPlaced in the stream and at the webhook", 120*time.Second, func() bool {
					if ns.count(t) < len(sns) {
						return false
					}
					got, _, _, _ := rec.snapshot()
					return len(got) >= len(sns)
				})
				took := time.Since(restart)
				t.Logf("%s: every event at its sinks %v after the restart began (serving after %v)", how, took.Round(100*time.Millisecond), ready.Round(100*time.Millisecond))
				placedIDs(t, ns, sns) // each exactly once in the stream
				_, _, bad, _ := rec.snapshot()
				for _, e := range bad {
					t.Error(e)
				}
				// The leases are 60 s (outbox) and 40 s (an attempt at the
				// default timeout): well under them means taken back.
				if took > 15*time.Second {
					t.Errorf("the events waited %v after the restart: the claims were not taken back", took.Round(100*time.Millisecond))
				}
				s2.Stop(t)
			})
		}
	}
}

// streamOn is the test's stream on the NATS server at url (serve makes
// it), deleted at the end.
func streamOn(t *testing.T, url, name, prefix string) *eventStream {
	t.Helper()
	s := newEventStream(t, url) // its cleanup deletes s.Name as it is then
	s.Name, s.Prefix = name, prefix
	return s
}

// liveClaims counts the claims query reads whose lease still holds (read
// and compared here: the backends store times in their own ways).
func liveClaims(t *testing.T, db *store.DB, query string) int {
	t.Helper()
	rows, err := db.SQL.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	n, now := 0, time.Now()
	for rows.Next() {
		var until time.Time
		if err := rows.Scan(&until); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		if until.After(now) {
			n++
		}
	}
	return n
}
