package e2e

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// A pool past its endsAt gives its remainder back to main stock through the
// binary: serve's closer loop returns it once (one change-type-8 pair in
// the ledger), and a storefront close-expired run afterwards finds nothing
// left to return. storefront reconcile then prints the pool balanced.
func TestPoolEndsThroughTheCloser(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			s := Start(t, spec, "--close-interval", "200ms", "--stock-ttl", "1ms", "--response-cache=false")
			id, stock := tshirtSku(t, s, "黑色,L")
			// Pool times are whole seconds: the pool ends at the second
			// after the next one.
			ends := time.Now().UTC().Truncate(time.Second).Add(2 * time.Second)
			var c struct{ CreateStockPool struct{ ID string } }
			decode(t, s.Query(t, s.AdminToken, `mutation($in: CreateStockPoolInput!) { createStockPool(input: $in) { id } }`,
				map[string]any{"in": map[string]any{"itemId": id, "name": "e2e", "price": "1.00", "quantity": 3,
					"startsAt": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339), "endsAt": ends.Format(time.RFC3339)}}), &c)
			if _, after := tshirtSku(t, s, "黑色,L"); after != stock-3 {
				t.Fatalf("main stock %d after a pool of 3, want %d", after, stock-3)
			}
			// The closer runs every 200 ms: wait for the return, bounded.
			deadline := time.Now().Add(15 * time.Second)
			for {
				if _, after := tshirtSku(t, s, "黑色,L"); after == stock {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the pool's 3 units not back on main stock 15 s after creating it")
				}
				time.Sleep(100 * time.Millisecond)
			}
			var l struct {
				StockLedger struct {
					Edges []struct {
						Node struct {
							ChangeType, ChangeNum int
							PoolID                string
						}
					}
				}
			}
			decode(t, s.Query(t, s.AdminToken, `query($id: ID!) { stockLedger(itemId: $id, first: 100) { edges { node { changeType changeNum poolId } } } }`,
				map[string]any{"id": id}), &l)
			var back []string
			for _, e := range l.StockLedger.Edges {
				if e.Node.ChangeType == 8 {
					back = append(back, e.Node.PoolID+":"+strconv.Itoa(e.Node.ChangeNum))
				}
			}
			if len(back) != 2 {
				t.Errorf("change-type-8 rows %v, want one pair (-3 on the pool, +3 on main stock)", back)
			}
			out, err := exec.Command(binary(t), "close-expired", "--db", spec).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "returned 0 ended stock pools") {
				t.Errorf("close-expired after the closer: %v\n%s", err, out)
			}
			out, err = exec.Command(binary(t), "reconcile", "--db", spec).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "1 stock pool(s), 0 of them do not balance") {
				t.Errorf("reconcile: %v\n%s", err, out)
			}
		})
	}
}
