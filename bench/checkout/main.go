// Command checkout is `make bench`'s checkout table (issue 8): on one
// database, in one run, the ceiling of one-row-per-order designs (raw
// single-row CAS), then placeOrder on the plain path and on the group-commit
// path, in process and over real HTTP, on one hot SKU and spread over 16 SKUs,
// at 1, 16 and 64 closed-loop clients, with a correctness line per run and the
// ratios. Ratios are the figures to read: the machine is shared and noisy,
// and only numbers measured side by side in one run compare.
//
//	go run ./bench/checkout -db 'mysql:root@tcp(127.0.0.1:3306)/test'
//	go run ./bench/checkout -db 'postgres:postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go run ./bench/checkout -db sqlite -dur 2s
//	go run ./bench/checkout -only 'hot/.*/64' -clients 64 -hotrow ../shared/bench/hotrow
//
// Plain and group runs of the same SKUs, transport and clients are
// interleaved in half-length slices (plain, group, group, plain) and share one
// correctness line.
//
// Sections 6 and 7 are issue 17's lock at order: placeOrder on the hot SKU
// of a lock-at-order goods (runs named lock/plain|group/transport/clients),
// each next to the deduct-at-order hot SKU's group path in the same
// interleaved slices, and the payment transition's rate over pre-placed
// orders of both modes (pay/deduct|lock/in-process/clients):
//
//	go run ./bench/checkout -db 'mysql:root@tcp(127.0.0.1:3306)/test' -only '^(hot|lock|pay)/'
//
// Section 8 is issue 18's stock pools (bench/checkout/pool.go): a flash sale
// from a pool at -pool-flash clients while -pool-ordinary clients order the
// same SKU from main stock, the same without the pool, the ordinary clients
// alone, and the hot SKU's group path, interleaved (runs pool/transport/
// flash clients):
//
//	go run ./bench/checkout -db 'mysql:root@tcp(127.0.0.1:3306)/test' -only '^pool/'
//
// Section 9 is issue 28's Galera cluster (bench/checkout/cluster.go): -dbs
// lists the nodes, and only that section runs, at the last -clients count:
//
//	go run ./bench/checkout -db 'mysql:root@tcp(127.0.0.1:3306)/test' -clients 64 \
//	  -dbs 'mysql:root@tcp(127.0.0.1:3311)/test,mysql:root@tcp(127.0.0.1:3312)/test,mysql:root@tcp(127.0.0.1:3313)/test'
//
// Section 10 is issue 38's pool sizes (bench/checkout/pools.go): -pools
// lists main+batch sizes, and only that section runs:
//
//	go run ./bench/checkout -db 'postgres:…' -clients 64 -pools 64+8,20+4 -pool-rounds 3
//
// On MariaDB and PostgreSQL it creates and drops its own database on the
// server named by the DSN; on SQLite it uses a temporary file.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"storefront/internal/platform/proccpu"

	"github.com/go-sql-driver/mysql"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/gctune"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

func main() {
	def := os.Getenv("STOREFRONT_BENCH_DB")
	if def == "" {
		def = "sqlite"
	}
	dbFlag := flag.String("db", def, "sqlite, mysql:DSN or postgres:DSN: a database is created on that server and dropped afterwards (STOREFRONT_BENCH_DB)")
	dur := flag.Duration("dur", 2*time.Second, "measured time of each run (in two slices, each after a 300 ms warm-up)")
	clientsFlag := flag.String("clients", "1,16,64", "closed-loop client counts")
	hotrow := flag.String("hotrow", "", "directory of ../shared/bench/hotrow: also run its -mode=raw and -mode=group (MariaDB only)")
	only := flag.String("only", "", "run only the placeOrder runs whose name (e.g. hot/group/http/64) matches this regexp")
	flag.BoolVar(&withRaw, "raw", true, "run the raw CAS (section 1 and in each pair); false leaves the database to the placeOrder runs, e.g. while profiling it")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of this process to the file")
	memprofile := flag.String("memprofile", "", "write an allocation profile of this process to the file at the end")
	flag.StringVar(&loadClient, "load-client", "lean", "HTTP runs: lean (a wrk-like keep-alive HTTP/1.1 client, bench/checkout/lean.go) or net/http (Go's client)")
	flag.IntVar(&groupInFlight, "group-inflight", checkout.DefaultConfig().GroupInFlight, "the group path's batches in flight (serve's --group-inflight)")
	flag.IntVar(&groupMax, "group-max", checkout.DefaultConfig().GroupMax, "the group path's most orders per batch (serve's --group-max)")
	flag.IntVar(&poolBatchMax, "pool-batch-max", checkout.DefaultConfig().PoolBatchMax, "the group path's most orders per batch of a stock pool (serve's --pool-batch-max)")
	flag.IntVar(&payPool, "pay-pool", 5000, "section 7: unpaid orders of each mode placed (outside the measured slices) before each payment slice, at least")
	gcPercent := flag.Int("gc-percent", gctune.DefaultPercent, "GC target of this process, which hosts the server: serve's default (GOGC, when set, wins)")
	dbsFlag := flag.String("dbs", "", "comma-separated mysql:DSN of a Galera cluster's nodes: run only section 9, the hot SKU through 1 node and through all, beside -db's single server (cluster.go)")
	syncWait := flag.Bool("sync-wait", true, "section 9: wsrep_sync_wait=1 on the nodes' DSNs, as docs/operations.md deploys them")
	poolsFlag := flag.String("pools", "", "comma-separated main+batch pool sizes (e.g. 64+8,20+4): run only section 10, the group path at each size in turn, at the last -clients count (pools.go)")
	poolRounds := flag.Int("pool-rounds", 3, "section 10: rounds, each running every -pools size once for -dur")
	otelEndpoint := flag.String("otel-endpoint", "", "trace the placeOrder runs to this OTLP/HTTP receiver, as serve's --otel-endpoint (default: tracing off)")
	otelRatio := flag.Float64("otel-sample-ratio", 1, "with -otel-endpoint: serve's --otel-sample-ratio")
	otelTail := flag.Bool("otel-tail", true, "with -otel-endpoint: serve's --otel-keep-errors and --otel-keep-slow at their defaults; false: both off (head sampling alone)")
	flag.Parse()
	gcInForce, gcFrom = gctune.Apply(*gcPercent)
	if *otelEndpoint != "" {
		c := tracing.DefaultConfig()
		c.Endpoint, c.Ratio = *otelEndpoint, *otelRatio
		if !*otelTail {
			c.KeepErrors, c.KeepSlow = false, 0
		}
		var err error
		if benchTracing, err = tracing.New(context.Background(), c); err != nil {
			log.Fatal(err)
		}
		defer benchTracing.Shutdown(context.Background())
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	if *memprofile != "" {
		runtime.MemProfileRate = 64 << 10
		defer func() {
			f, err := os.Create(*memprofile)
			if err != nil {
				log.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				log.Fatal(err)
			}
		}()
	}
	cellFilter = regexp.MustCompile(*only)
	if loadClient != "lean" && loadClient != "net/http" {
		log.Fatalf("-load-client %q: want lean or net/http", loadClient)
	}
	var clients []int
	for _, s := range strings.Split(*clientsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			log.Fatalf("-clients %q: want positive integers", *clientsFlag)
		}
		clients = append(clients, n)
	}
	if *poolsFlag != "" {
		sizes, err := parsePools(*poolsFlag)
		if err != nil {
			log.Fatal(err)
		}
		bad, err := poolsSection(*dbFlag, sizes, *poolRounds, *dur, clients[len(clients)-1], []string{"in-process", "http"})
		if err == nil && bad > 0 {
			err = fmt.Errorf("%d runs failed their correctness check", bad)
		}
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	if *dbsFlag != "" {
		bad, err := clusterSection(*dbFlag, strings.Split(*dbsFlag, ","), *dur, clients[len(clients)-1], *syncWait)
		if err == nil && bad > 0 {
			err = fmt.Errorf("%d runs failed their correctness check", bad)
		}
		if err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(*dbFlag, *dur, clients, *hotrow); err != nil {
		pprof.StopCPUProfile()
		log.Fatal(err)
	}
}

var (
	cellFilter                            *regexp.Regexp
	groupInFlight, groupMax, poolBatchMax int
	// benchTracing is -otel-endpoint's tracer provider (nil: off).
	benchTracing *tracing.Tracing
	loadClient   string
	withRaw      bool
	payPool      int
	gcInForce    int    // the GC target the runs had…
	gcFrom       string // …and where it came from
)

func run(dbSpec string, dur time.Duration, clients []int, hotrow string) error {
	ctx := context.Background()
	spec, dsn, cleanup, err := freshDatabase(dbSpec)
	if err != nil {
		return err
	}
	defer cleanup()
	db, err := store.Open(ctx, spec, store.WithConnectorWrapper(connectors()))
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return err
	}
	ids, err := demo.Seed(ctx, catalog.New(db, catalog.DefaultConfig()))
	if err != nil {
		return err
	}
	hot, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("黑色,L")).OnlyID(ctx)
	if err != nil {
		return err
	}
	casSKU, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("白色,S")).OnlyID(ctx)
	if err != nil {
		return err
	}
	spread, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.ShoeCode])).Order(sku.ByID()).Limit(16).IDs(ctx)
	if err != nil {
		return err
	}
	lock, err := newLockSKU(ctx, db)
	if err != nil {
		return err
	}
	for _, id := range append([]int64{hot, casSKU, lock}, spread...) {
		if err := restock(db.SQL, id, 100_000_000); err != nil {
			return err
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("checkout benchmark: %s, %s per run, clients %v, GC target %d (%s), load average %s\n",
		db.Dialect.Name(), dur, clients, gcInForce, gcFrom, strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))

	switch db.Dialect.Name() { // before the first sample
	case "mysql":
		dbPID = proccpu.MySQLServer(db.SQL)
	case "postgres":
		postgresCPU = proccpu.PostgresServerHere(db.SQL)
	}
	b := newBench(db, hot, casSKU, lock, spread, dur)
	fmt.Println("\n1. raw single-row CAS (autocommit UPDATE sku SET stock = stock - 1, stock_version = stock_version + 1 WHERE id = ? AND stock >= 1)")
	for _, c := range clients {
		if !withRaw {
			fmt.Println("   (skipped: -raw=false)")
			break
		}
		r := b.rawCAS(c)
		fmt.Printf("   clients=%-3d %8.0f ops/s  p50 %6.2f ms  p99 %7.2f ms  go %s µs/op  db %s µs/op\n", c, r.rate, r.p50, r.p99, cpuCell(r.selfUS), cpuCell(r.dbUS))
	}
	// The raw CAS moves stock without ledger rows (here and inside every
	// pair); book them at the end so the database stays balanced like any
	// other.
	defer func() {
		if err := bookRaw(db.SQL, casSKU); err != nil {
			fmt.Fprintln(os.Stderr, "booking the raw CAS units:", err)
		}
	}()
	if hotrow != "" && db.Dialect.Name() == "mysql" {
		// The anchor's group mode is the same idea on bare SQL (three rows
		// and six index entries an order, no idempotency record, no outbox):
		// its own group/raw says how far grouping can go on this machine,
		// whose disk and cores set the raw CAS's rate.
		for _, c := range clients {
			var rates [2]float64
			for i, mode := range []string{"raw", "group"} {
				out, rate, err := runHotrow(hotrow, dsn, mode, c, dur)
				if err != nil {
					return err
				}
				rates[i] = rate
				fmt.Printf("   hotrow -mode=%s -c=%d: %s\n", mode, c, out)
			}
			fmt.Printf("   hotrow group/raw at %d clients: %s\n", c, ratio(rates[1], rates[0]))
		}
	}

	fmt.Println("\n2–4. placeOrder, one unit per order, each with its own Idempotency-Key")
	fmt.Printf("   %-9s %-6s %-11s %7s %9s %8s %8s %9s %9s %9s  %s\n", "SKUs", "path", "transport", "clients", "orders/s", "p50 ms", "p99 ms", "batch", "go µs/op", "db µs/op", "correctness")
	results := map[cellKey]result{}
	for _, skus := range []string{"hot", "16"} {
		for _, tr := range []string{"in-process", "http"} {
			for _, c := range clients {
				var paths []string
				for _, path := range []string{"plain", "group"} {
					if cellFilter.MatchString(fmt.Sprintf("%s/%s/%s/%d", skus, path, tr, c)) {
						paths = append(paths, path)
					}
				}
				if len(paths) == 0 {
					continue
				}
				rs, err := b.pair(skus, tr, c, paths)
				if err != nil {
					return err
				}
				results[cellKey{skus, "raw", tr, c}] = rs["raw"]
				for i, path := range paths {
					r := rs[path]
					results[cellKey{skus, path, tr, c}] = r
					batch := "-"
					if r.batches > 0 {
						batch = fmt.Sprintf("%.1f", float64(r.batched)/float64(r.batches))
					}
					check := ""
					if i == len(paths)-1 {
						check = r.check // one line for the pair: both paths moved the same SKUs
					}
					fmt.Printf("   %-9s %-6s %-11s %7d %9.0f %8.2f %8.2f %9s %9s %9s  %s\n", skus, path, tr, c, r.rate, r.p50, r.p99, batch, cpuCell(r.selfUS), cpuCell(r.dbUS), check)
				}
			}
		}
	}
	var bad int
	for k, r := range results {
		if k.path != "raw" && !r.ok {
			bad++
		}
	}

	fmt.Println("\n5. ratios, each against the raw CAS measured in the same pair (raw, plain, group, group, plain, raw)")
	fmt.Printf("   %-9s %-11s %7s %9s %10s %10s %11s\n", "SKUs", "transport", "clients", "raw ops/s", "group/raw", "plain/raw", "group/plain")
	for _, skus := range []string{"hot", "16"} {
		for _, tr := range []string{"in-process", "http"} {
			for _, c := range clients {
				g, p := results[cellKey{skus, "group", tr, c}].rate, results[cellKey{skus, "plain", tr, c}].rate
				raw := results[cellKey{skus, "raw", tr, c}].rate
				if g == 0 && p == 0 {
					continue
				}
				rawCell := "-" // -raw=false
				if raw > 0 {
					rawCell = fmt.Sprintf("%.0f", raw)
				}
				fmt.Printf("   %-9s %-11s %7d %9s %10s %10s %11s\n", skus, tr, c, rawCell, ratio(g, raw), ratio(p, raw), ratio(g, p))
			}
		}
	}
	lockBad, err := b.lockSections(clients)
	if err != nil {
		return err
	}
	poolBad, err := b.poolSection()
	if err != nil {
		return err
	}
	if bad += lockBad + poolBad; bad > 0 {
		return fmt.Errorf("%d runs failed their correctness check", bad)
	}
	return nil
}

// lockSections prints sections 6 and 7 (issue 17): placeOrder on the
// lock-mode hot SKU next to the deduct-mode hot SKU's group path, and the
// payment transition's rate for both modes. It returns how many runs failed
// their correctness check.
func (b *bench) lockSections(clients []int) (int, error) {
	bad := 0
	type cell struct {
		transport string
		clients   int
		rs        map[string]result
	}
	var cells []cell
	for _, tr := range []string{"in-process", "http"} {
		for _, c := range clients {
			var paths []string
			for _, path := range []string{"plain", "group"} {
				if cellFilter.MatchString(fmt.Sprintf("lock/%s/%s/%d", path, tr, c)) {
					paths = append(paths, path)
				}
			}
			if len(paths) == 0 {
				continue
			}
			if len(cells) == 0 {
				fmt.Println("\n6. lock at order: placeOrder on the hot SKU of a lock-at-order goods (lock_stock CAS on stock - lock_stock, no ledger row),")
				fmt.Println("   and the deduct-at-order hot SKU's group path as the reference, interleaved (deduct, lock group, lock plain, lock plain, lock group, deduct)")
				fmt.Printf("   %-7s %-6s %-11s %7s %9s %8s %8s %9s %9s %9s  %s\n", "SKU", "path", "transport", "clients", "orders/s", "p50 ms", "p99 ms", "batch", "go µs/op", "db µs/op", "correctness")
			}
			rs, err := b.lockPair(tr, c, paths)
			if err != nil {
				return bad, err
			}
			cells = append(cells, cell{tr, c, rs})
			names := []string{"deduct", "group", "plain"}
			last := ""
			for _, n := range names {
				if _, ok := rs[n]; ok {
					last = n
				}
			}
			for _, n := range names {
				r, ok := rs[n]
				if !ok {
					continue
				}
				skuName, path := "lock", n
				if n == "deduct" {
					skuName, path = "deduct", "group"
				}
				batch := "-"
				if r.batches > 0 {
					batch = fmt.Sprintf("%.1f", float64(r.batched)/float64(r.batches))
				}
				check := ""
				if n == last {
					check = r.check
				}
				fmt.Printf("   %-7s %-6s %-11s %7d %9.0f %8.2f %8.2f %9s %9s %9s  %s\n", skuName, path, tr, c, r.rate, r.p50, r.p99, batch, cpuCell(r.selfUS), cpuCell(r.dbUS), check)
			}
			if !rs["deduct"].ok {
				bad++
			}
		}
	}
	if len(cells) > 0 {
		fmt.Println("\n   ratios (same slices): lock group / deduct group (issue 17's target ≥ 0.8), lock group / lock plain")
		fmt.Printf("   %-11s %7s %22s %20s\n", "transport", "clients", "lock group/deduct group", "lock group/plain")
		for _, c := range cells {
			fmt.Printf("   %-11s %7d %22s %20s\n", c.transport, c.clients, ratio(c.rs["group"].rate, c.rs["deduct"].rate), ratio(c.rs["group"].rate, c.rs["plain"].rate))
		}
	}

	pools := map[string]*pool{"deduct": {mode: "deduct", item: b.hot}, "lock": {mode: "lock", item: b.lock}}
	header := false
	for _, c := range clients {
		var modes []string
		for _, m := range []string{"deduct", "lock"} {
			if cellFilter.MatchString(fmt.Sprintf("pay/%s/in-process/%d", m, c)) {
				modes = append(modes, m)
			}
		}
		if len(modes) == 0 {
			continue
		}
		if !header {
			header = true
			fmt.Println("\n7. payment transition UNPAID → PAID: a signed SUCCESS notification per pre-placed one-unit order of the hot SKU,")
			fmt.Println("   payments.Service.Notify in process (its transaction runs checkout.PayTx), deduct-mode and lock-mode orders interleaved (deduct, lock, lock, deduct)")
			fmt.Printf("   %-7s %-11s %7s %11s %8s %8s %9s %9s %12s  %s\n", "orders", "transport", "clients", "payments/s", "p50 ms", "p99 ms", "go µs/op", "db µs/op", "lock/deduct", "correctness")
		}
		rs, err := b.payRun(c, pools, payPool)
		if err != nil {
			return bad, err
		}
		for i, m := range []string{"deduct", "lock"} {
			r := rs[m]
			ratioCell, check := "", ""
			if i == 1 {
				ratioCell, check = ratio(rs["lock"].rate, rs["deduct"].rate), r.check
			}
			fmt.Printf("   %-7s %-11s %7d %11.0f %8.2f %8.2f %9s %9s %12s  %s\n", m, "in-process", c, r.rate, r.p50, r.p99, cpuCell(r.selfUS), cpuCell(r.dbUS), ratioCell, check)
		}
		if !rs["lock"].ok {
			bad++
		}
	}
	return bad, nil
}

// freshDatabase returns a store spec for an empty database, the go-sql-driver
// DSN of it (MariaDB) and a cleanup.
func freshDatabase(spec string) (string, string, func(), error) {
	if spec == "sqlite" || strings.HasPrefix(spec, "sqlite:") {
		dir, err := os.MkdirTemp("", "benchcheckout")
		if err != nil {
			return "", "", nil, err
		}
		return "sqlite:" + filepath.Join(dir, "bench.db"), "", func() { os.RemoveAll(dir) }, nil
	}
	if dsn, ok := strings.CutPrefix(spec, "postgres:"); ok {
		return freshPostgres(dsn)
	}
	dsn, ok := strings.CutPrefix(spec, "mysql:")
	if !ok {
		return "", "", nil, fmt.Errorf("-db %q: want sqlite, mysql:DSN or postgres:DSN", spec)
	}
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", "", nil, err
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return "", "", nil, err
	}
	name := fmt.Sprintf("sfbench_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
		admin.Close()
		return "", "", nil, err
	}
	cfg.DBName = name
	cfg.InterpolateParams = true
	cleanup := func() {
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name)
		admin.Close()
	}
	return "mysql:" + cfg.FormatDSN(), cfg.FormatDSN(), cleanup, nil
}

// restock adds n units to a SKU with the ledger row an adjustment writes.
func restock(db *sql.DB, id, n int64) error {
	if _, err := db.Exec("UPDATE sku SET stock = stock + ?, stock_version = stock_version + 1 WHERE id = ?", n, id); err != nil {
		return err
	}
	_, err := db.Exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
		"SELECT id, goods_id, 5, ?, stock - ?, stock, 'manual', ?, 'bench', ? FROM sku WHERE id = ?",
		n, n, fmt.Sprint("bench-restock-", id), time.Now().UTC(), id)
	return err
}

// bookRaw books the raw CAS runs' units as one adjustment row.
func bookRaw(db *sql.DB, id int64) error {
	_, err := db.Exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at) "+
		"SELECT s.id, s.goods_id, 5, s.stock - l.bal, l.bal, s.stock, 'manual', 'bench-raw-cas', 'raw CAS runs', ? "+
		"FROM sku s, (SELECT COALESCE(SUM(change_num), 0) AS bal FROM stock_log WHERE item_id = ?) l WHERE s.id = ?",
		time.Now().UTC(), id, id)
	return err
}

// cpuCell prints CPU µs per call, "-" when not measured.
func cpuCell(us float64) string {
	if us == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", us)
}

// ratio prints a/b, "-" when either was not run.
func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

// connectors is the statement spans' wrapper with -otel-endpoint, none
// without.
func connectors() store.ConnectorWrapper {
	if !benchTracing.On() {
		return nil
	}
	return benchTracing.Connector
}
