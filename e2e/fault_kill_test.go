//go:build fault

package e2e

import (
	"testing"
	"time"

	"storefront/internal/testdb"
)

// kill -9 in the middle of a checkout load, then restart on the same
// database: nothing a client was told is lost, nothing half-written stays.
func TestFaultKillDuringCheckout(t *testing.T) {
	for _, b := range []testdb.Backend{testdb.SQLite, testdb.MySQL} {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec)
			id := setStockTo(t, s, "黑色,L", 100000) // never runs out: every request writes
			stop := make(chan struct{})
			o, wg := load(t, s.URL, id, 32, stop)
			waitFor(t, "50 orders before the kill", 30*time.Second, func() bool {
				orders, _, _ := o.snapshot()
				return len(orders) >= 50
			})
			kill9(t, s)
			time.Sleep(200 * time.Millisecond) // the load meets a dead server
			close(stop)
			wg.Wait()
			seen, codes, _ := o.snapshot()
			t.Logf("before and at the kill: %d orders seen, outcomes %v", len(seen), codes)
			for code := range codes {
				if code != "" && code != "transport" {
					t.Errorf("a client got %q (%d times) before the kill", code, codes[code])
				}
			}

			s2 := Start(t, spec) // the restart: migrate and demo seeding on a crashed database
			checkDurable(t, spec, seen)
			if r := s2.Query(t, s2.AdminToken, `{ stockReconciliation { itemId diff } }`, nil); string(r.Data) != `{"stockReconciliation":[]}` {
				t.Errorf("stockReconciliation after the restart: %s %+v", r.Data, r.Errors)
			}
			// And it takes orders again.
			if r := s2.Query(t, s2.CustomerToken, placeOrder, map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}}); len(r.Errors) > 0 {
				t.Errorf("order after the restart: %+v", r.Errors)
			}
		})
	}
}
