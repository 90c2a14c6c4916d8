package checkout_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// BenchmarkPlaceOrderVsHotrow is issue 5's comparison: placeOrder through the
// real HTTP handler on MariaDB at 64 clients next to the anchor
// ../shared/bench/hotrow -mode=checkout -c=64 (the minimal raw-SQL checkout
// transaction) in the same run, interleaved, on the same database server. It
// prints each round and the median ratio (target ≥ 1.0). Rounds:
// STOREFRONT_BENCH_ROUNDS (default 3); window: 5 s each.
//
//	STOREFRONT_TEST_MYSQL_DSN='root@tcp(127.0.0.1:3306)/test' go test -run '^$' -bench PlaceOrderVsHotrow -benchtime 1x ./internal/checkout
func BenchmarkPlaceOrderVsHotrow(b *testing.B) {
	spec := testdb.Spec(b, testdb.MySQL)
	hotrow := buildHotrow(b)
	db, err := store.Open(context.Background(), spec)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		b.Fatal(err)
	}
	hot := benchSetup(b, db)
	h := benchHandler(b, db, checkout.DefaultConfig())
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(spec, "mysql:"))
	if err != nil {
		b.Fatal(err)
	}
	cfg.InterpolateParams = true
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("STOREFRONT_BENCH_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	var ratios, handlerRatios, ours, anchors []float64
	var seq atomic.Int64
	for r := range rounds {
		out, err := exec.Command(hotrow, "-mode=checkout", "-c=64", "-dur=5s", "-dsn", cfg.FormatDSN()).CombinedOutput()
		if err != nil {
			b.Fatalf("hotrow: %v\n%s", err, out)
		}
		m := regexp.MustCompile(`ops/s=\s*([0-9.]+)`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("no ops/s in hotrow output:\n%s", out)
		}
		anchor, _ := strconv.ParseFloat(string(m[1]), 64)
		ops, p50, p99 := closedLoop(b, 64, 5*time.Second, func() error {
			return h.place(hot, fmt.Sprint("vs-", seq.Add(1)))
		})
		// The handler called in process: the server's whole path without the
		// benchmark's own HTTP client and loopback sockets (hotrow has neither).
		hops, hp50, hp99 := closedLoop(b, 64, 5*time.Second, func() error {
			return h.serve(hot, fmt.Sprint("vs-", seq.Add(1)))
		})
		fmt.Printf("round %d: hotrow checkout %.0f ops/s; placeOrder over HTTP %.0f orders/s (p50 %.1f ms, p99 %.1f ms) ratio %.2f; "+
			"handler in process %.0f orders/s (p50 %.1f ms, p99 %.1f ms) ratio %.2f\n",
			r+1, anchor, ops, p50, p99, ops/anchor, hops, hp50, hp99, hops/anchor)
		ratios, handlerRatios = append(ratios, ops/anchor), append(handlerRatios, hops/anchor)
		ours, anchors = append(ours, ops), append(anchors, anchor)
	}
	fmt.Printf("median over %d rounds: hotrow %.0f ops/s; placeOrder over HTTP %.0f orders/s, ratio %.2f; handler in process ratio %.2f (target ≥ 1.0)\n",
		rounds, median(anchors), median(ours), median(ratios), median(handlerRatios))
	b.ReportMetric(median(ours), "orders/s")
	b.ReportMetric(median(anchors), "hotrow_ops/s")
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(median(handlerRatios), "handler_ratio")
}

func buildHotrow(b *testing.B) string {
	dir := os.Getenv("STOREFRONT_HOTROW_DIR")
	if dir == "" {
		dir = "../../../shared/bench/hotrow"
	}
	if _, err := os.Stat(filepath.Join(dir, "main.go")); err != nil {
		b.Skipf("hotrow not found at %s (set STOREFRONT_HOTROW_DIR)", dir)
	}
	bin := filepath.Join(b.TempDir(), "hotrow")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("building hotrow: %v\n%s", err, out)
	}
	return bin
}

// closedLoop runs c clients for dur and returns orders/s, p50 and p99 in ms.
func closedLoop(b *testing.B, c int, dur time.Duration, place func() error) (float64, float64, float64) {
	deadline := time.Now().Add(dur)
	lat := make([][]time.Duration, c)
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if err := place(); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	if err := firstErr.Load(); err != nil {
		b.Fatalf("placeOrder failed: %v", err)
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	return float64(len(all)) / time.Since(start).Seconds(), ms(all[len(all)/2]), ms(all[len(all)*99/100])
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
