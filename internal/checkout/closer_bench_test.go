package checkout

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// BenchmarkCloserVsPlaceOrder measures the timeout closer beside the
// checkout it follows, in one run on one database: a set of orders placed
// by 16 closed-loop clients (the default group path, single-SKU orders over
// the four T-shirt SKUs), then the same orders closed as expired by one
// closer, with claims of 32 orders per transaction and, for the next set, of
// one order per transaction (the closer before issue 38). Each round
// reports both rates and the ratio closed/s : placed/s; the metrics are the
// medians over the rounds. A ratio above 1 is a closer that keeps up with
// the checkout of that database alone.
//
// The backend: STOREFRONT_BENCH_DB (sqlite, mysql, postgres; the server's
// DSN from the test environment), else every backend the test environment
// has. Orders per set: STOREFRONT_BENCH_ORDERS (default 3000); rounds:
// STOREFRONT_BENCH_ROUNDS (default 3).
//
//	source /work/testenv.sh   # or STOREFRONT_TEST_MYSQL_DSN / STOREFRONT_TEST_POSTGRES_DSN
//	STOREFRONT_BENCH_DB=mysql go test -run '^$' -bench CloserVsPlaceOrder -benchtime 1x ./internal/checkout
func BenchmarkCloserVsPlaceOrder(b *testing.B) {
	backends := testdb.Backends
	if v := os.Getenv("STOREFRONT_BENCH_DB"); v != "" {
		backends = []testdb.Backend{testdb.Backend(v)}
	}
	orders, rounds := benchEnv(b, "STOREFRONT_BENCH_ORDERS", 3000), benchEnv(b, "STOREFRONT_BENCH_ROUNDS", 3)
	for _, backend := range backends {
		b.Run(string(backend), func(b *testing.B) {
			db := testdb.Open(b, backend)
			skus := benchSKUs(b, db)
			var (
				mu    sync.Mutex
				clock = time.Now().UTC()
			)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
			placer := New(db, DefaultConfig())
			placer.now = now
			closer := New(db, DefaultConfig())
			closer.now = now
			ttl := placer.cfg.OrderTTL
			var key atomic.Int64
			rates := map[string][]float64{}
			for round := range rounds {
				for _, size := range []int{claimSize, 1} {
					start := time.Now()
					race(orders, 16, func(i int) {
						id := skus[i%len(skus)]
						if _, err := placer.Place(context.Background(), PlaceInput{UserID: "bench" + strconv.Itoa(i%97),
							IdempotencyKey: fmt.Sprint("close-bench-", key.Add(1)), Items: []ItemInput{one(id, 1)}}); err != nil {
							b.Errorf("placing: %v", err)
						}
					})
					placed := float64(orders) / time.Since(start).Seconds()
					advance(ttl + time.Minute)
					closer.claimMax = size
					start = time.Now()
					n, err := closer.CloseExpired(context.Background())
					closed := float64(n) / time.Since(start).Seconds()
					if err != nil || n != orders {
						b.Fatalf("closer (%d a transaction) closed %d of %d: %v", size, n, orders, err)
					}
					b.Logf("round %d: placed %.0f orders/s; closed %.0f orders/s with %d a transaction: ratio %.2f",
						round+1, placed, closed, size, closed/placed)
					rates["placed"] = append(rates["placed"], placed)
					rates[fmt.Sprint("closed", size)] = append(rates[fmt.Sprint("closed", size)], closed)
					rates[fmt.Sprint("ratio", size)] = append(rates[fmt.Sprint("ratio", size)], closed/placed)
				}
			}
			b.ReportMetric(median(rates["placed"]), "placed/s")
			for _, size := range []int{claimSize, 1} {
				b.ReportMetric(median(rates[fmt.Sprint("closed", size)]), fmt.Sprintf("closed/s(%d/tx)", size))
				b.ReportMetric(median(rates[fmt.Sprint("ratio", size)]), fmt.Sprintf("closed:placed(%d/tx)", size))
			}
		})
	}
}

// benchSKUs seeds the demo catalog and gives the T-shirt's SKUs a stock no
// run exhausts, booked in the ledger like any adjustment.
func benchSKUs(b *testing.B, db *store.DB) []int64 {
	ctx := context.Background()
	ids, err := demo.Seed(ctx, catalog.New(db, catalog.DefaultConfig()))
	if err != nil {
		b.Fatal(err)
	}
	skus, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode])).Order(sku.ByID()).Limit(4).IDs(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range skus {
		if _, err := db.SQL.Exec("UPDATE sku SET stock = stock + 100000000 WHERE id = ?", id); err != nil {
			b.Fatal(err)
		}
		if _, err := db.SQL.Exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
			"SELECT id, goods_id, 5, 100000000, stock - 100000000, stock, 'manual', ?, '', ? FROM sku WHERE id = ?", fmt.Sprint("bench-", id), time.Now().UTC(), id); err != nil {
			b.Fatal(err)
		}
	}
	return skus
}

func benchEnv(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		b.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
