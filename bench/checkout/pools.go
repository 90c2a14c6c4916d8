package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/proccpu"
	"storefront/internal/platform/store"
)

// Section 10 is issue 38's connection budgets: -pools lists pool sizes
// (main+batch, serve's --db-max-conns and --db-batch-conns), and only that
// section runs. Each size gets its own store.DB on one database and its own
// checkout services; the group path (serve's default for single-SKU
// orders) and the plain path (every other order: one transaction of the
// main pool each) place orders on the hot SKU and over 16 SKUs at the last
// -clients count, the sizes taking turns in every round (-pool-rounds), so
// that the ratios compare runs a few seconds apart:
//
//	go run ./bench/checkout -db 'postgres:postgres://postgres@127.0.0.1:5432/test?sslmode=disable' \
//	  -clients 64 -pools 64+8,20+4 -pool-rounds 3

// poolSize is one -pools entry.
type poolSize struct{ main, batch int }

func (p poolSize) String() string { return fmt.Sprintf("%d+%d", p.main, p.batch) }

func parsePools(s string) ([]poolSize, error) {
	var out []poolSize
	for _, f := range strings.Split(s, ",") {
		m, b, ok := strings.Cut(strings.TrimSpace(f), "+")
		mn, err1 := strconv.Atoi(m)
		bn, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || mn < 1 || bn < 1 {
			return nil, fmt.Errorf("-pools %q: want main+batch sizes, e.g. 64+8,20+4", s)
		}
		out = append(out, poolSize{mn, bn})
	}
	return out, nil
}

func poolsSection(dbSpec string, sizes []poolSize, rounds int, dur time.Duration, clients int, transports []string) (int, error) {
	ctx := context.Background()
	spec, _, cleanup, err := freshDatabase(dbSpec)
	if err != nil {
		return 0, err
	}
	defer cleanup()
	setup, err := store.Open(ctx, spec, store.WithPools(4, 1))
	if err != nil {
		return 0, err
	}
	defer setup.Close()
	if err := setup.Migrate(ctx); err != nil {
		return 0, err
	}
	ids, err := demo.Seed(ctx, catalog.New(setup, catalog.DefaultConfig()))
	if err != nil {
		return 0, err
	}
	hot, err := setup.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr("黑色,L")).OnlyID(ctx)
	if err != nil {
		return 0, err
	}
	spread, err := setup.Client.Sku.Query().Where(sku.GoodsID(ids[demo.ShoeCode])).Order(sku.ByID()).Limit(16).IDs(ctx)
	if err != nil {
		return 0, err
	}
	for _, id := range append([]int64{hot}, spread...) {
		if err := restock(setup.SQL, id, 100_000_000); err != nil {
			return 0, err
		}
	}
	switch setup.Dialect.Name() {
	case "mysql":
		dbPID = proccpu.MySQLServer(setup.SQL)
	case "postgres":
		postgresCPU = proccpu.PostgresServerHere(setup.SQL)
	}
	benches := make([]*bench, len(sizes))
	for i, sz := range sizes {
		db, err := store.Open(ctx, spec, store.WithPools(sz.main, sz.batch))
		if err != nil {
			return 0, err
		}
		defer db.Close()
		benches[i] = newBench(db, hot, 0, 0, spread, 0)
		// Keys of their own: every bench's buyer is "bench".
		benches[i].seq.Store(int64(i+1) * 1_000_000_000)
	}
	fmt.Printf("\n10. pool sizes (main+batch connections per instance), %d clients, %d rounds of %v, sizes in turn (old, new, new, old, …)\n", clients, rounds, dur)
	fmt.Printf("   %-5s %-6s %-11s %-7s %9s %8s %8s %7s %7s  %s\n", "SKUs", "path", "transport", "pools", "orders/s", "p50 ms", "p99 ms", "batch", "/first", "each round /first")
	bad := 0
	for _, skus := range []string{"hot", "16"} {
		set := []int64{hot}
		if skus != "hot" {
			set = spread
		}
		for _, path := range []string{"group", "plain"} {
			for _, tr := range transports {
				stock0, err := benches[0].stockSum(set)
				if err != nil {
					return 0, err
				}
				wins := make([][]window, len(sizes))
				batches, batched := make([]int64, len(sizes)), make([]int64, len(sizes))
				var accepted int64
				for r := range rounds {
					for j := range sizes {
						i := j
						if r%2 == 1 { // neither size always goes first
							i = len(sizes) - 1 - j
						}
						b := benches[i]
						svc := b.svc[path]
						bat0, ord0 := svc.GroupStats()
						w, err := b.loop(clients, dur, b.placeOp(path, tr, set))
						if err != nil {
							return 0, fmt.Errorf("pools %s %s/%s/%s: %w", sizes[i], skus, path, tr, err)
						}
						bat1, ord1 := svc.GroupStats()
						wins[i] = append(wins[i], w)
						batches[i] += bat1 - bat0
						batched[i] += ord1 - ord0
						accepted += w.done
					}
				}
				stock1, err := benches[0].stockSum(set)
				if err != nil {
					return 0, err
				}
				ledger, err := benches[0].ledgerSum(set)
				if err != nil {
					return 0, err
				}
				first := stats(wins[0]...).rate
				for i, sz := range sizes {
					rs := stats(wins[i]...)
					batch := "-"
					if batches[i] > 0 {
						batch = fmt.Sprintf("%.1f", float64(batched[i])/float64(batches[i]))
					}
					var each []string
					for r := range wins[i] {
						if i > 0 {
							each = append(each, ratio(stats(wins[i][r]).rate, stats(wins[0][r]).rate))
						}
					}
					fmt.Printf("   %-5s %-6s %-11s %-7s %9.0f %8.2f %8.2f %7s %7s  %s\n", skus, path, tr, sz, rs.rate, rs.p50, rs.p99, batch, ratio(rs.rate, first), strings.Join(each, " "))
				}
				ok := stock0-stock1 == accepted && ledger == stock1
				if !ok {
					bad++
				}
				mark := "ok"
				if !ok {
					mark = "FAILED"
				}
				fmt.Printf("   %-5s %-6s %-11s %s: accepted %d, stock −%d, ledger sum %d = stock %d\n", skus, path, tr, mark, accepted, stock0-stock1, ledger, stock1)
			}
		}
	}
	return bad, nil
}
