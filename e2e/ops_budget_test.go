package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// The connection budget the defaults promise: on a stock PostgreSQL
// (max_connections 100, 3 of them kept for superusers) three instances and
// a command, each with its pools full.
const (
	stockPostgresSlots = 100 - 3
	defaultBudget      = store.DefaultMaxConns + store.DefaultBatchConns
)

// Two `storefront serve` processes and the timeout closer run as a command
// beside them, on a PostgreSQL database whose role may hold no more
// connections than those three processes' default pools: 64 buyers on each
// instance, every one of them answered with an order, and nothing anywhere
// refused a connection (53300). The suite's server has max_connections
// raised for the parallel tests; the role's CONNECTION LIMIT is what keeps
// this test on the stock budget. With 64+8 connections an instance (the
// sizes before issue 38), STOREFRONT_DB_MAX_CONNS=64
// STOREFRONT_DB_BATCH_CONNS=8 make the same run fail.
func TestConnectionBudgetPostgres(t *testing.T) {
	if 4*defaultBudget > stockPostgresSlots {
		t.Fatalf("default pools %d+%d: four processes take %d connections, over a stock PostgreSQL's %d",
			store.DefaultMaxConns, store.DefaultBatchConns, 4*defaultBudget, stockPostgresSlots)
	}
	const processes = 3 // two instances and the closer
	spec, adminSpec := testdb.PostgresRole(t, processes*defaultBudget)
	closing := []string{"--order-ttl", "1s", "--close-interval", "200ms"}
	a := Start(t, spec, closing...)
	b := Start(t, spec, closing...)
	admin, err := store.Open(context.Background(), adminSpec, store.WithPools(2, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	// Every T-shirt SKU with stock enough for every buyer: each order is
	// placed, none stops early at OUT_OF_STOCK. Few SKUs, so that orders
	// wait on each other's row locks, holding their connections.
	var g struct {
		Goods struct {
			Skus []struct{ ID, SpecValueStr string }
		}
	}
	decode(t, a.Query(t, a.AdminToken, `{ goods(id: 1) { skus { id specValueStr } } }`, nil), &g)
	var ids []string
	for _, k := range g.Goods.Skus {
		ids = append(ids, setStockTo(t, a, k.SpecValueStr, 100_000))
	}

	// The third process: the timeout closer as a command, one pass after
	// another for as long as the buyers run.
	stop := make(chan struct{})
	var closer sync.WaitGroup
	var passes atomic.Int64
	var closerFailure atomic.Value
	closer.Add(1)
	go func() {
		defer closer.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			out, err := exec.Command(binary(t), "close-expired", "--db", spec, "--order-ttl", "1s").CombinedOutput()
			if err != nil {
				closerFailure.CompareAndSwap(nil, fmt.Sprintf("%v: %s", err, out))
				return
			}
			passes.Add(1)
		}
	}()
	// The role's connections, sampled while the buyers run: the load must
	// fill the pools, or the test proves nothing.
	var most atomic.Int64
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			var n int64
			if err := admin.SQL.QueryRow("SELECT COUNT(*) FROM pg_stat_activity WHERE usename = current_database()").Scan(&n); err == nil && n > most.Load() {
				most.Store(n)
			}
		}
	}()

	const perInstance, buyers = 64, 3000
	tokens := make([]string, buyers)
	for i := range tokens {
		tokens[i] = tokenFor(t, fmt.Sprintf("budget-%d", i), auth.Customer)
	}
	servers := []*Server{a, b}
	var placed atomic.Int64
	var mu sync.Mutex
	var failures []string
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := range 2 * perInstance {
		s := servers[w%2] // 64 workers on each instance
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				// Every other order has two lines: the plain path, one
				// transaction of the main pool each, waiting on the rows
				// the others lock (single-SKU orders batch on the batch
				// pool's few connections).
				items := []map[string]any{{"itemId": ids[i%len(ids)], "quantity": 1}}
				if i%2 == 1 {
					items = append(items, map[string]any{"itemId": ids[(i+1)%len(ids)], "quantity": 1})
				}
				r, _, err := post(context.Background(), s.URL, tokens[i], fmt.Sprintf("budget-%d", i), placeOrder,
					map[string]any{"items": items})
				switch {
				case err != nil:
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				case len(r.Errors) > 0:
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %s", r.Code(), r.Errors[0].Message))
					mu.Unlock()
				default:
					placed.Add(1)
				}
			}
		}()
	}
	for i := range buyers {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	close(stop)
	closer.Wait()
	<-sampled

	if len(failures) > 0 {
		t.Errorf("%d of %d buyers got no order, e.g. %s", len(failures), buyers, failures[0])
	}
	if f, _ := closerFailure.Load().(string); f != "" {
		t.Errorf("close-expired failed: %s", f)
	}
	for name, s := range map[string]*Server{"A": a, "B": b} {
		for _, l := range strings.Split(s.stderr.String(), "\n") {
			if strings.Contains(l, "53300") || strings.Contains(l, "too many") {
				t.Errorf("instance %s was refused a connection: %s", name, l)
				break
			}
		}
	}
	t.Logf("%d orders placed, %d closer passes beside them; the role held at most %d connections (its limit %d)",
		placed.Load(), passes.Load(), most.Load(), processes*defaultBudget)
	if passes.Load() == 0 {
		t.Errorf("the closer never finished a pass while the buyers ran")
	}
}
