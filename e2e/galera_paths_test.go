//go:build galera

package e2e

import (
	"fmt"
	"testing"
	"time"

	"storefront/internal/platform/store"
)

// The other ways an order takes stock, through one instance per node: 16
// SKUs in two-SKU orders whose lines come in opposite orders, the plain path
// (group commit off), lock at order, and a stock pool. Every buyer gets an
// order or OUT_OF_STOCK, and every node agrees.
func TestGaleraPathsAndModes(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	servers := serveOnEach(t, specs)
	dbs := openEach(t, specs)
	const buyers, workers = 1000, 64
	clean := func(what string, through []*Server, ta *tally) {
		t.Helper()
		t.Logf("%s: %v; conflicts retried by these instances so far %d", what, ta, retried(t, through))
		if len(ta.codes) != 0 {
			t.Errorf("%s: %v; want only orders and OUT_OF_STOCK", what, ta)
			for i, s := range through {
				t.Logf("instance %d's log:\n%s", i+1, logLines(s, "unavailable"))
			}
		}
	}

	t.Run("16 SKUs, two-SKU orders in opposite orders", func(t *testing.T) {
		var skus []string
		rows, err := dbs[0].SQL.Query("SELECT s.id FROM sku s JOIN goods g ON g.id = s.goods_id WHERE g.code = 'DEMO-SHOE-500' ORDER BY s.id LIMIT 16")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			skus = append(skus, fmt.Sprint(id))
		}
		rows.Close()
		if len(skus) != 16 {
			t.Fatalf("%d shoe SKUs, want 16", len(skus))
		}
		stock := map[string]int{}
		for _, id := range skus {
			setStock(t, servers[0], dbs[0], id, 50)
		}
		ta := crowd(t, servers, "spread", buyers, workers, func(i int) []map[string]any {
			a, b := skus[i%16], skus[(i+1)%16]
			if i%2 == 1 {
				a, b = b, a // the other order: the batch and the plain path sort their locks
			}
			return []map[string]any{{"itemId": a, "quantity": 1}, {"itemId": b, "quantity": 1}}
		})
		clean("16 SKUs", servers, ta)
		if ta.ok.Load()+ta.outOfStock.Load() != buyers || ta.ok.Load() == 0 {
			t.Errorf("16 SKUs: %v", ta)
		}
		for i, db := range dbs {
			left := dbInt(t, db, "SELECT SUM(stock) FROM sku WHERE id IN ("+join(skus)+")")
			if want := 16*50 - 2*int(ta.ok.Load()); left != want {
				t.Errorf("node %d: the 16 SKUs hold %d, want %d (800 − 2 × %d orders)", i+1, left, want, ta.ok.Load())
			}
		}
		for _, id := range skus {
			stock[id] = dbInt(t, dbs[0], "SELECT stock FROM sku WHERE id = "+id)
		}
		agree(t, "after 16 SKUs", specs, dbs, stock, -1)
	})

	t.Run("the plain path", func(t *testing.T) {
		plain := serveOnEach(t, specs, "--group-commit=false")
		id := skuBySpec(t, dbs[0], "黑色,XL")
		setStock(t, plain[0], dbs[0], id, 200)
		ta := crowd(t, plain, "plain", buyers, workers, one(id))
		clean("plain path", plain, ta)
		if ta.ok.Load() != 200 || ta.outOfStock.Load() != buyers-200 {
			t.Errorf("plain path, stock 200: %v; want 200 orders", ta)
		}
		agree(t, "after the plain path", specs, dbs, map[string]int{id: 0}, -1)
		for _, s := range plain {
			s.Stop(t)
		}
	})

	t.Run("lock at order", func(t *testing.T) {
		id := fmt.Sprint(dbInt(t, dbs[0], "SELECT MIN(s.id) FROM sku s JOIN goods g ON g.id = s.goods_id WHERE g.code = 'DEMO-SCARF'"))
		setStock(t, servers[0], dbs[0], id, 200)
		ta := crowd(t, servers, "lock", buyers, workers, one(id))
		clean("lock at order", servers, ta)
		if ta.ok.Load() != 200 || ta.outOfStock.Load() != buyers-200 {
			t.Errorf("lock at order, stock 200: %v; want 200 orders", ta)
		}
		for i, db := range dbs {
			if got := dbInt(t, db, "SELECT lock_stock FROM sku WHERE id = "+id); got != 200 {
				t.Errorf("node %d: lock_stock %d, want 200 (stock held by the unpaid orders)", i+1, got)
			}
		}
		agree(t, "after lock at order", specs, dbs, map[string]int{id: 200}, -1)
	})

	t.Run("a stock pool", func(t *testing.T) {
		id := skuBySpec(t, dbs[0], "藏青,M")
		setStock(t, servers[0], dbs[0], id, 500)
		var p struct{ CreateStockPool struct{ ID string } }
		decode(t, servers[0].Query(t, servers[0].AdminToken, `mutation($in: CreateStockPoolInput!) { createStockPool(input: $in) { id } }`,
			map[string]any{"in": map[string]any{"itemId": id, "name": "galera", "price": "1.00", "quantity": 100, "perBuyerLimit": 1,
				"startsAt": time.Now().UTC().Add(-time.Minute).Format(time.RFC3339), "endsAt": time.Now().UTC().Add(time.Hour).Format(time.RFC3339)}}), &p)
		pool := p.CreateStockPool.ID
		ta := crowd(t, servers, "pool", buyers, workers, func(int) []map[string]any {
			return []map[string]any{{"itemId": id, "poolId": pool, "quantity": 1}}
		})
		clean("stock pool", servers, ta)
		if ta.ok.Load() != 100 || ta.outOfStock.Load() != buyers-100 {
			t.Errorf("a pool of 100: %v; want 100 orders", ta)
		}
		for i, db := range dbs {
			if got := dbInt(t, db, "SELECT stock FROM stock_pool WHERE id = "+pool); got != 0 {
				t.Errorf("node %d: pool stock %d, want 0", i+1, got)
			}
			if got := dbInt(t, db, "SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE pool_id = "+pool); got != 0 {
				t.Errorf("node %d: the pool's ledger sums to %d, want 0", i+1, got)
			}
		}
		agree(t, "after the pool", specs, dbs, map[string]int{id: 400}, -1)
	})
	ordersEverywhere(t, dbs)
}

// ordersEverywhere: every node holds the same orders.
func ordersEverywhere(t *testing.T, dbs []*store.DB) {
	t.Helper()
	want := dbInt(t, dbs[0], "SELECT COUNT(*) FROM orders")
	for i, db := range dbs[1:] {
		if got := dbInt(t, db, "SELECT COUNT(*) FROM orders"); got != want {
			t.Errorf("node %d: %d orders, node 1 %d", i+2, got, want)
		}
	}
}

func join(ids []string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += ", "
		}
		s += id
	}
	return s
}
