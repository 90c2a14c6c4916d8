//go:build galera

package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// The Galera tests run against a three-node cluster (scripts/galera.sh up):
// locally they skip without one; with STOREFRONT_TEST_REQUIRE_GALERA=1 (CI)
// its absence is a failure. STOREFRONT_TEST_GALERA_NODES lists the nodes'
// addresses (default the script's 127.0.0.1:3311,3312,3313; user root, no
// password).
const (
	galeraNodesEnv   = "STOREFRONT_TEST_GALERA_NODES"
	galeraRequireEnv = "STOREFRONT_TEST_REQUIRE_GALERA"
)

// galeraCluster is the cluster's nodes, each with an admin connection (no
// database) for what a test does to the node itself.
type galeraCluster struct {
	addrs []string
	admin []*sql.DB
}

func galera(t *testing.T) *galeraCluster {
	t.Helper()
	list := os.Getenv(galeraNodesEnv)
	if list == "" {
		list = "127.0.0.1:3311,127.0.0.1:3312,127.0.0.1:3313"
	}
	c := &galeraCluster{addrs: strings.Split(list, ",")}
	skip := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv(galeraRequireEnv) == "1" {
			t.Fatalf("%s, and %s=1: the Galera tests must run", msg, galeraRequireEnv)
		}
		t.Skipf("%s: skipping the Galera tests (start a cluster with scripts/galera.sh up)", msg)
	}
	for i, a := range c.addrs {
		db, err := sql.Open("mysql", "root@tcp("+a+")/?timeout=2s")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		c.admin = append(c.admin, db)
		size, state, ready, err := c.status(i)
		if err != nil {
			skip("no Galera node at %s (%v)", a, err)
		}
		if size != len(c.addrs) || state != "Synced" || ready != "ON" {
			skip("Galera node %s: cluster size %d, %s, wsrep_ready %s; want %d, Synced, ON", a, size, state, ready, len(c.addrs))
		}
	}
	return c
}

// status is node i's wsrep_cluster_size, wsrep_local_state_comment and
// wsrep_ready.
func (c *galeraCluster) status(i int) (size int, state, ready string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	rows, err := c.admin[i].QueryContext(ctx, "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_cluster_size', 'wsrep_local_state_comment', 'wsrep_ready')")
	if err != nil {
		return 0, "", "", err
	}
	defer rows.Close()
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return 0, "", "", err
		}
		switch strings.ToLower(k) {
		case "wsrep_cluster_size":
			fmt.Sscan(v, &size)
		case "wsrep_local_state_comment":
			state = v
		case "wsrep_ready":
			ready = v
		}
	}
	return size, state, ready, rows.Err()
}

// database makes a database of the test's own on the cluster (created
// through node 1, replicated) and returns serve's --db for each node.
// wsrep_sync_wait=1 makes every read wait until the node has applied what
// the cluster committed before it: a buyer who placed an order through one
// node reads it through another (docs/operations.md, "Causal reads").
func (c *galeraCluster) database(t *testing.T) []string {
	t.Helper()
	name := fmt.Sprintf("galera_%d", time.Now().UnixNano())
	if _, err := c.admin[0].Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := c.admin[0].Exec("DROP DATABASE IF EXISTS " + name); err != nil {
			t.Logf("dropping %s: %v", name, err)
		}
	})
	specs := make([]string, len(c.addrs))
	for i, a := range c.addrs {
		specs[i] = "mysql:root@tcp(" + a + ")/" + name + "?wsrep_sync_wait=1"
	}
	return specs
}

// serveOnEach starts one instance per node, node 1's first: it migrates
// and seeds the demo catalog, which the others then find. Each reads
// through its own node and writes checkout, payments and stock through the
// first ready node of the list (--db-writer, the same on all: the deployment
// docs/operations.md describes).
func serveOnEach(t *testing.T, specs []string, extra ...string) []*Server {
	t.Helper()
	out := make([]*Server, len(specs))
	for i, spec := range specs {
		out[i] = Start(t, spec, append([]string{"--db-writer", writerSpec(specs)}, extra...)...)
	}
	return out
}

// writerSpec is the nodes' specs as one list, in node order.
func writerSpec(specs []string) string {
	dsns := make([]string, len(specs))
	for i, s := range specs {
		dsns[i] = strings.TrimPrefix(s, "mysql:")
	}
	return "mysql:" + strings.Join(dsns, ",")
}

// openEach opens every node's database for the test's own reads.
func openEach(t *testing.T, specs []string) []*store.DB {
	t.Helper()
	dbs := make([]*store.DB, len(specs))
	for i, spec := range specs {
		db, err := store.Open(context.Background(), spec)
		if err != nil {
			t.Fatalf("node %d: %v", i+1, err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	return dbs
}

// skuBySpec finds a demo T-shirt SKU's id by its spec text, by query: ids
// on the cluster step by the number of nodes and are not 1..n.
func skuBySpec(t *testing.T, db *store.DB, spec string) string {
	t.Helper()
	var id int64
	if err := db.SQL.QueryRow("SELECT id FROM sku WHERE spec_value_str = ? ORDER BY id LIMIT 1", spec).Scan(&id); err != nil {
		t.Fatalf("SKU %s: %v", spec, err)
	}
	return fmt.Sprint(id)
}

// setStock sets SKU id's stock through the admin mutation of s.
func setStock(t *testing.T, s *Server, db *store.DB, id string, stock int) {
	t.Helper()
	version := dbInt(t, db, "SELECT stock_version FROM sku WHERE id = "+id)
	must[struct{ Stock int }](t, s.Query(t, s.AdminToken, `mutation($in: SetStockInput!) { setStock(input: $in) { stock } }`,
		map[string]any{"in": map[string]any{"itemId": id, "stock": stock, "expectedVersion": version, "reason": "galera e2e"}}), "setStock")
}

// tally is what a crowd of buyers got.
type tally struct {
	ok, outOfStock atomic.Int64
	mu             sync.Mutex
	codes          map[string]int // any other answer, by code (or transport error)
	first          map[string]string
}

func (ta *tally) other(code, msg string) {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	if ta.codes == nil {
		ta.codes, ta.first = map[string]int{}, map[string]string{}
	}
	ta.codes[code]++
	if _, ok := ta.first[code]; !ok {
		ta.first[code] = msg
	}
}

func (ta *tally) String() string {
	ta.mu.Lock()
	defer ta.mu.Unlock()
	return fmt.Sprintf("%d orders, %d OUT_OF_STOCK, others %v (first of each: %v)", ta.ok.Load(), ta.outOfStock.Load(), ta.codes, ta.first)
}

// crowd sends buyers orders from distinct customers (named by tag) for
// items, round-robin over servers, workers at a time.
func crowd(t *testing.T, servers []*Server, tag string, buyers, workers int, items func(i int) []map[string]any) *tally {
	t.Helper()
	tokens := make([]string, buyers)
	for i := range tokens {
		tokens[i] = tokenFor(t, fmt.Sprintf("%s-%d", tag, i), auth.Customer)
	}
	ta := &tally{}
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := servers[i%len(servers)]
				r, _, err := post(context.Background(), s.URL, tokens[i], fmt.Sprintf("%s-%d", tag, i), placeOrder,
					map[string]any{"items": items(i)})
				switch {
				case err != nil:
					ta.other("transport", err.Error())
				case len(r.Errors) == 0:
					ta.ok.Add(1)
				case r.Code() == "OUT_OF_STOCK":
					ta.outOfStock.Add(1)
				default:
					ta.other(r.Code(), r.Errors[0].Message)
				}
			}
		}()
	}
	for i := range buyers {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return ta
}

func one(id string) func(int) []map[string]any {
	return func(int) []map[string]any { return []map[string]any{{"itemId": id, "quantity": 1}} }
}

// agree checks, on every node, the SKUs' stock and that their ledger sums to
// it, the orders' count, and that reconcile finds nothing.
func agree(t *testing.T, what string, specs []string, dbs []*store.DB, stock map[string]int, orders int) {
	t.Helper()
	for i, db := range dbs {
		for id, want := range stock {
			if got := dbInt(t, db, "SELECT stock FROM sku WHERE id = "+id); got != want {
				t.Errorf("%s, node %d: SKU %s stock %d, want %d", what, i+1, id, got, want)
			}
			if got := dbInt(t, db, "SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE pool_id = 0 AND item_id = "+id); got != want {
				t.Errorf("%s, node %d: SKU %s ledger sums to %d, want %d", what, i+1, id, got, want)
			}
		}
		if orders >= 0 {
			if got := dbInt(t, db, "SELECT COUNT(*) FROM orders"); got != orders {
				t.Errorf("%s, node %d: %d orders, want %d", what, i+1, got, orders)
			}
		}
		if out, clean := reconcileCLI(t, specs[i]); !clean {
			t.Errorf("%s, node %d: reconcile:\n%s", what, i+1, out)
		}
	}
}

// isolate cuts node i off the cluster (on) or lets it rejoin (off).
func (c *galeraCluster) isolate(t *testing.T, i int, on bool) {
	t.Helper()
	v := map[bool]string{true: "1", false: "0"}[on]
	if _, err := c.admin[i].Exec("SET GLOBAL wsrep_provider_options = 'gmcast.isolate=" + v + "'"); err != nil {
		t.Fatalf("node %d: gmcast.isolate=%s: %v", i+1, v, err)
	}
}

// logLines is the lines of s's log that contain substr (the last ten).
func logLines(s *Server, substr string) string {
	var out []string
	for _, l := range strings.Split(s.stderr.String(), "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out[max(0, len(out)-10):], "\n")
}
