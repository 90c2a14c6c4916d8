package e2e

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// Several instances, one database: two `storefront serve` processes on one
// MariaDB or PostgreSQL database, the checkout race through both, an edit through one
// seen through the other within the stock TTL, then both timeout closers
// racing over the same expiring orders.
func TestTwoInstancesOneDatabase(t *testing.T) {
	for _, backend := range testdb.Servers {
		t.Run(string(backend), func(t *testing.T) { twoInstancesOneDatabase(t, backend) })
	}
}

func twoInstancesOneDatabase(t *testing.T, backend testdb.Backend) {
	spec := testdb.Spec(t, backend) // skips without a DSN, fails in CI
	const stockTTL = time.Second
	a := Start(t, spec, "--stock-ttl", stockTTL.String())
	b := Start(t, spec, "--stock-ttl", stockTTL.String()) // its demo seeding finds the catalog and adds nothing
	db, err := store.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var goodsRows int
	if err := db.SQL.QueryRow("SELECT COUNT(*) FROM goods").Scan(&goodsRows); err != nil || goodsRows != 5 {
		t.Fatalf("goods after two demo starts: %d (%v), want the 5 demo goods (the 4 and the water bottle of demo.SeedShipping)", goodsRows, err)
	}
	if tpl, addr := dbInt(t, db, "SELECT COUNT(*) FROM shipping_template"), dbInt(t, db, "SELECT COUNT(*) FROM address"); tpl != 1 || addr != 1 {
		t.Fatalf("after two demo starts: %d freight templates and %d addresses, want the demo's one of each", tpl, addr)
	}

	id := setStockTo(t, a, "黑色,L", 200)
	const buyers, workers = 1000, 64
	ok, outOfStock := race(t, []*Server{a, b}, id, buyers, workers)
	if ok != 200 || outOfStock != buyers-200 {
		t.Errorf("through both instances: %d orders, %d OUT_OF_STOCK; want 200 and %d", ok, outOfStock, buyers-200)
	}
	if stock := dbInt(t, db, "SELECT stock FROM sku WHERE id = "+id); stock != 0 {
		t.Errorf("stock after the race: %d, want 0", stock)
	}
	if n := dbInt(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'"); n != 200 {
		t.Errorf("UNPAID orders in the database: %d, want 200", n)
	}
	if out, clean := reconcileCLI(t, spec); !clean {
		t.Errorf("reconcile after the race:\n%s", out)
	}

	priceEditSeenElsewhere(t, a, b, id, stockTTL)

	// Both closers at once: restart both with a short order TTL, then place
	// orders that expire while both are running.
	a.Stop(t)
	b.Stop(t)
	closing := []string{"--order-ttl", "2s", "--close-interval", "500ms", "--stock-ttl", stockTTL.String()}
	a, b = Start(t, spec, closing...), Start(t, spec, closing...)
	wait.Within(t, "the 200 raced orders closed", 30*time.Second, func() bool {
		return dbInt(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0
	})
	const more = 100
	for i := range more {
		s := []*Server{a, b}[i%2]
		r, _, err := post(context.Background(), s.URL, tokenFor(t, fmt.Sprintf("late-%d", i), auth.Customer), "", placeOrder,
			map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
		if err != nil || len(r.Errors) > 0 {
			t.Fatalf("late order %d: %v %+v", i, err, r)
		}
	}
	wait.Within(t, "the late orders closed by the two closers", 30*time.Second, func() bool {
		return dbInt(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'UNPAID'") == 0
	})
	if n := dbInt(t, db, "SELECT COUNT(*) FROM orders WHERE status = 'CLOSED'"); n != 200+more {
		t.Errorf("closed orders: %d, want %d", n, 200+more)
	}
	// Each order restored its stock exactly once.
	if n := dbInt(t, db, "SELECT COUNT(*) FROM (SELECT biz_sn FROM stock_log WHERE change_type = 3 GROUP BY biz_sn HAVING COUNT(*) <> 1) twice"); n != 0 {
		t.Errorf("%d orders have more than one restore row", n)
	}
	if n := dbInt(t, db, "SELECT COUNT(DISTINCT biz_sn) FROM stock_log WHERE change_type = 3"); n != 200+more {
		t.Errorf("orders with a restore row: %d, want %d", n, 200+more)
	}
	if stock := dbInt(t, db, "SELECT stock FROM sku WHERE id = "+id); stock != 200 {
		t.Errorf("stock after every order closed: %d, want 200", stock)
	}
	// The counters are added when a closer pass returns, a moment after its
	// last commit: wait for them (bounded), then require exactly one count
	// per order.
	var closedA, closedB int
	sum := func() int {
		closedA, _ = strconv.Atoi(metricValue(t, a, `storefront_orders_closed_total{cause="timeout"}`))
		closedB, _ = strconv.Atoi(metricValue(t, b, `storefront_orders_closed_total{cause="timeout"}`))
		return closedA + closedB
	}
	deadline := time.Now().Add(5 * time.Second)
	for sum() < 200+more && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if closedA+closedB != 200+more {
		t.Errorf("closed by A %d + by B %d = %d, want %d (each once)", closedA, closedB, closedA+closedB, 200+more)
	}
	t.Logf("timeout closes: instance A %d, instance B %d", closedA, closedB)
	if out, clean := reconcileCLI(t, spec); !clean {
		t.Errorf("reconcile after closing:\n%s", out)
	}
}

// race sends buyers single-unit orders for item id from distinct customers,
// spread over servers, workers at a time. Anything but success or
// OUT_OF_STOCK fails the test.
func race(t *testing.T, servers []*Server, id string, buyers, workers int) (ok, outOfStock int64) {
	t.Helper()
	tokens := make([]string, buyers)
	for i := range tokens {
		tokens[i] = tokenFor(t, fmt.Sprintf("buyer-%d", i), auth.Customer)
	}
	var okN, oos atomic.Int64
	jobs := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				s := servers[i%len(servers)]
				r, _, err := post(context.Background(), s.URL, tokens[i], fmt.Sprintf("race-%d", i), placeOrder,
					map[string]any{"items": []map[string]any{{"itemId": id, "quantity": 1}}})
				switch {
				case err != nil:
					mu.Lock()
					failures = append(failures, err.Error())
					mu.Unlock()
				case len(r.Errors) == 0:
					okN.Add(1)
				case r.Code() == "OUT_OF_STOCK":
					oos.Add(1)
				default:
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %s", r.Code(), r.Errors[0].Message))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range buyers {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d buyers got neither an order nor OUT_OF_STOCK, e.g. %s", len(failures), failures[0])
	}
	return okN.Load(), oos.Load()
}

// setStockTo sets a demo T-shirt SKU's stock through the admin mutation
// and returns its id.
func setStockTo(t *testing.T, s *Server, spec string, stock int) string {
	t.Helper()
	var g struct {
		Goods struct {
			Skus []struct {
				ID, SpecValueStr string
				StockVersion     int
			}
		}
	}
	decode(t, s.Query(t, s.AdminToken, `{ goods(id: 1) { skus { id specValueStr stockVersion } } }`, nil), &g)
	for _, k := range g.Goods.Skus {
		if k.SpecValueStr == spec {
			must[struct{ Stock int }](t, s.Query(t, s.AdminToken, `mutation($in: SetStockInput!) { setStock(input: $in) { stock } }`,
				map[string]any{"in": map[string]any{"itemId": k.ID, "stock": stock, "expectedVersion": k.StockVersion, "reason": "ops e2e"}}), "setStock")
			return k.ID
		}
	}
	t.Fatalf("no SKU %s", spec)
	return ""
}

// priceEditSeenElsewhere edits a price through a and waits for b's product
// page, whose cache already holds the old price, to show it: within the
// stock TTL plus a margin for a loaded machine.
func priceEditSeenElsewhere(t *testing.T, a, b *Server, id string, ttl time.Duration) {
	t.Helper()
	priceOn := func(s *Server) string {
		var g struct {
			Goods struct {
				Skus []struct{ ID, SellPrice string }
			}
		}
		decode(t, s.Query(t, "", `{ goods(id: 1) { skus { id sellPrice } } }`, nil), &g)
		for _, k := range g.Goods.Skus {
			if k.ID == id {
				return k.SellPrice
			}
		}
		t.Fatalf("SKU %s not on the product page", id)
		return ""
	}
	old := priceOn(b) // warm b's cache
	var v struct {
		Goods struct {
			Skus []struct {
				ID      string
				Version int
			}
		}
	}
	decode(t, a.Query(t, a.AdminToken, `{ goods(id: 1) { skus { id version } } }`, nil), &v)
	version := 0
	for _, k := range v.Goods.Skus {
		if k.ID == id {
			version = k.Version
		}
	}
	const price = "77.70"
	if old == price {
		t.Fatalf("the demo price is already %s", price)
	}
	must[struct{ SellPrice string }](t, a.Query(t, a.AdminToken, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`,
		map[string]any{"in": map[string]any{"itemId": id, "expectedVersion": version, "sellPrice": price}}), "updateSku")
	edited := time.Now()
	wait.Within(t, "the new price on instance B", ttl+3*time.Second, func() bool { return priceOn(b) == price })
	t.Logf("price edited through A seen through B after %v (stock TTL %v)", time.Since(edited).Round(time.Millisecond), ttl)
}

func dbInt(t *testing.T, db *store.DB, query string) int {
	t.Helper()
	var n int
	if err := db.SQL.QueryRow(query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}
