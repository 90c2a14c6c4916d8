package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/ent/sku"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// Issue 28's section: the hot SKU through a Galera cluster. -dbs lists the
// nodes' DSNs; the hot SKU's group path runs through one node and through
// every node (one checkout service per node, in process and behind a real
// handler each, clients round-robin over them), beside the single server of
// -db in the same run:
//
//	go run ./bench/checkout -db 'mysql:root@tcp(127.0.0.1:3306)/test' \
//	  -dbs 'mysql:root@tcp(127.0.0.1:3311)/test,mysql:root@tcp(127.0.0.1:3312)/test,mysql:root@tcp(127.0.0.1:3313)/test'
//
// Unlike the other sections, an error does not stop a client: a buyer
// refused (UNAVAILABLE, with stock left) is counted and the client goes on,
// since refusals are what the section measures. The single server runs
// first: a process that has opened a Galera node retries conflicts as on
// Galera (internal/platform/store/wsrep_mysql.go).

type clusterResult struct {
	rate, p50, p99   float64
	ok, refused      int64
	retried          int64
	firstRefusal     string
	check            string
	nodes, clients   int
	setup, transport string
}

// clusterSection runs the section and returns how many runs failed their
// correctness check.
func clusterSection(single string, nodes []string, dur time.Duration, clients int, syncWait bool) (int, error) {
	var retried atomic.Int64
	saved := store.OnRetry
	store.OnRetry = func(cause string) { retried.Add(1); saved(cause) }
	defer func() { store.OnRetry = saved }()
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("\n9. the hot SKU through a Galera cluster (issue 28): group path, %d clients round-robin over the nodes, %s a run, wsrep_sync_wait=%v on the nodes' DSNs, load average %s\n",
		clients, dur, syncWait, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Printf("   %-16s %5s %-11s %9s %8s %8s %8s %8s %8s  %s\n", "setup", "nodes", "transport", "orders/s", "p50 ms", "p99 ms", "retried", "refused", "orders", "correctness")
	setups := []struct {
		name   string
		specs  []string
		writer bool
	}{{"single MariaDB", []string{single}, false}, {"galera, 1 node", nodes[:1], false}, {"galera, 3 nodes", nodes, false},
		{"3 nodes, writer", nodes, true}}
	bad := 0
	for _, st := range setups {
		for _, tr := range []string{"in-process", "http"} {
			r, err := clusterRun(st.specs, st.writer, tr, dur, clients, syncWait && st.name != "single MariaDB", &retried)
			if err != nil {
				return bad, fmt.Errorf("%s, %s: %w", st.name, tr, err)
			}
			if !strings.HasPrefix(r.check, "ok") {
				bad++
			}
			fmt.Printf("   %-16s %5d %-11s %9.0f %8.2f %8.2f %8d %8d %8d  %s\n", st.name, len(st.specs), tr, r.rate, r.p50, r.p99, r.retried, r.refused, r.ok, r.check)
			if r.firstRefusal != "" {
				fmt.Printf("   %16s first refusal: %s\n", "", r.firstRefusal)
			}
		}
	}
	return bad, nil
}

// clusterRun makes a fresh database through the first node (replicated to
// the others), seeds the demo catalog, and sells the hot SKU through every
// node for dur after a 300 ms warm-up. With writer, each node's checkout
// writes through the first ready node of the list (serve's --db-writer).
func clusterRun(specs []string, writer bool, transport string, dur time.Duration, clients int, syncWait bool, retried *atomic.Int64) (clusterResult, error) {
	ctx := context.Background()
	name := fmt.Sprintf("sfbench_%d", time.Now().UnixNano())
	var dbs, writers []*store.DB
	var dsns []string
	var admin *sql.DB
	defer func() {
		for _, db := range slices.Concat(dbs, writers) {
			db.Close()
		}
		if admin != nil {
			_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name)
			admin.Close()
		}
	}()
	for i, spec := range specs {
		dsn, ok := strings.CutPrefix(spec, "mysql:")
		if !ok {
			return clusterResult{}, fmt.Errorf("%q: want mysql:DSN", spec)
		}
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			return clusterResult{}, err
		}
		if i == 0 {
			cfg.DBName = ""
			if admin, err = sql.Open("mysql", cfg.FormatDSN()); err != nil {
				return clusterResult{}, err
			}
			if _, err := admin.Exec("CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"); err != nil {
				return clusterResult{}, err
			}
		}
		cfg.DBName = name
		if syncWait {
			if cfg.Params == nil {
				cfg.Params = map[string]string{}
			}
			cfg.Params["wsrep_sync_wait"] = "1"
		}
		dsns = append(dsns, cfg.FormatDSN())
		db, err := store.Open(ctx, "mysql:"+cfg.FormatDSN())
		if err != nil {
			return clusterResult{}, err
		}
		dbs = append(dbs, db)
		if i == 0 {
			if err := db.Migrate(ctx); err != nil {
				return clusterResult{}, err
			}
			if _, err := demo.Seed(ctx, catalog.New(db, catalog.DefaultConfig())); err != nil {
				return clusterResult{}, err
			}
		}
	}
	// Found by query on every node: ids are not 1..n on a cluster.
	hot, err := dbs[0].Client.Sku.Query().Where(sku.SpecValueStr("黑色,L")).First(ctx)
	if err != nil {
		return clusterResult{}, err
	}
	if err := restock(dbs[0].SQL, hot.ID, 100_000_000); err != nil {
		return clusterResult{}, err
	}
	// Every node has applied the seed and the restock before the clients
	// start, also without wsrep_sync_wait on the DSN (one causal read each).
	for _, db := range dbs {
		var n int64
		if err := db.SQL.QueryRow(causal+"SELECT stock FROM sku WHERE id = ?", hot.ID).Scan(&n); err != nil {
			return clusterResult{}, err
		}
	}
	signer, err := auth.NewSigner("bench-secret-0123456789")
	if err != nil {
		return clusterResult{}, err
	}
	token, _ := signer.Issue("bench", auth.Customer, time.Hour)
	body := placeBody(hot.ID)
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var ops []func(key string) error
	for _, db := range dbs {
		wdb := db
		if writer {
			if wdb, err = store.Open(ctx, "mysql:"+strings.Join(dsns, ",")); err != nil {
				return clusterResult{}, err
			}
			writers = append(writers, wdb)
		}
		sf := app.New(db, wdb, signer, app.DefaultConfig())
		svc := sf.Checkout
		if transport == "in-process" {
			ops = append(ops, func(key string) error {
				_, err := svc.Place(ctx, checkout.PlaceInput{UserID: "bench", IdempotencyKey: key,
					Items: []checkout.ItemInput{{ItemID: &hot.ID, Quantity: 1}}})
				return err
			})
			continue
		}
		srv := httptest.NewServer(sf.Handler())
		defer srv.Close()
		url := srv.URL + "/graphql"
		ops = append(ops, func(key string) error { return postOrder(hc, url, token, key, body) })
	}

	before := retried.Load()
	const warm = 300 * time.Millisecond
	start := time.Now()
	from, to := start.Add(warm), start.Add(warm+dur)
	var seq, ok, refused atomic.Int64
	var first atomic.Value
	lat := make([][]time.Duration, clients)
	var wg sync.WaitGroup
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op := ops[w%len(ops)]
			for {
				t0 := time.Now()
				if !t0.Before(to) {
					return
				}
				if err := op(fmt.Sprint("cluster-", seq.Add(1))); err != nil {
					refused.Add(1)
					first.CompareAndSwap(nil, err.Error())
					time.Sleep(10 * time.Millisecond) // a refused buyer does not retry at once
					continue
				}
				ok.Add(1)
				if t1 := time.Now(); t1.After(from) && !t1.After(to) {
					lat[w] = append(lat[w], t1.Sub(t0))
				}
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(lat...)
	slices.Sort(all)
	r := clusterResult{ok: ok.Load(), refused: refused.Load(), retried: retried.Load() - before}
	if s, _ := first.Load().(string); s != "" {
		r.firstRefusal = s[:min(len(s), 200)]
	}
	if len(all) > 0 {
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		r.rate, r.p50, r.p99 = float64(len(all))/dur.Seconds(), ms(all[len(all)/2]), ms(all[len(all)*99/100])
	}
	r.check = clusterCheck(dbs, hot.ID, hot.Stock+100_000_000, r.ok)
	return r, nil
}

// causal makes one statement wait until its node has applied what the
// cluster committed before it (ignored without wsrep): the check reads each
// node as of the end of the run, also when -sync-wait=false.
const causal = "SET STATEMENT wsrep_sync_wait = 1 FOR "

// clusterCheck: on every node, stock + orders' units = what was there, the
// ledger sums to the stock, and as many orders as buyers were told.
func clusterCheck(dbs []*store.DB, id, had, orders int64) string {
	var bad []string
	for i, db := range dbs {
		var stock, ledger, n int64
		if err := db.SQL.QueryRow(causal+"SELECT stock FROM sku WHERE id = ?", id).Scan(&stock); err != nil {
			return err.Error()
		}
		if err := db.SQL.QueryRow(causal+"SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE pool_id = 0 AND item_id = ?", id).Scan(&ledger); err != nil {
			return err.Error()
		}
		if err := db.SQL.QueryRow(causal + "SELECT COUNT(*) FROM orders").Scan(&n); err != nil {
			return err.Error()
		}
		if stock != had-orders || ledger != stock || n != orders {
			bad = append(bad, fmt.Sprintf("node %d: stock %d (want %d), ledger %d, orders %d", i+1, stock, had-orders, ledger, n))
		}
	}
	if len(bad) > 0 {
		return "FAIL " + strings.Join(bad, "; ")
	}
	return fmt.Sprintf("ok on %d node(s)", len(dbs))
}

// postOrder posts one placeOrder body with its key and checks the answer
// for an order number and no error, without decoding it.
func postOrder(hc *http.Client, url, token, key string, body []byte) error {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.Contains(raw, []byte(`"orderSn":"`)) || bytes.Contains(raw, []byte(`"errors"`)) {
		return fmt.Errorf("placeOrder: %d %s %v", resp.StatusCode, raw, err)
	}
	return nil
}
