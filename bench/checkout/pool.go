package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Stock pools (issue 18), section 8: the seed's claim that a flash sale on
// its own pool row does not starve ordinary orders of the same SKU. Four
// arms on one SKU of its own, and a fifth, interleaved in half-length
// slices (pool, no pool, quiet, hot, alone, alone, hot, quiet, no pool,
// pool):
//
//   - pool: the flash clients order from a pool of the SKU (poolId) while
//     the ordinary clients order the same SKU from main stock;
//   - no pool: the same clients, everyone on the SKU's main stock;
//   - quiet: the ordinary clients alone;
//   - hot: the hot SKU's group run (sections 2–4) at as many clients as the
//     flash sale, the reference of the flash-sale rate;
//   - alone: the flash clients from the pool with no ordinary clients
//     (a pool rests between its batches only beside the shop's orders).
//
// Everything runs on the group service (serve's configuration), so the
// section measures whichever path the service gives each order; its
// GroupStats over each arm say which that was.

var (
	poolFlash    = flag.Int("pool-flash", 64, "section 8: closed-loop flash-sale clients, each its own buyer")
	poolOrdinary = flag.Int("pool-ordinary", 4, "section 8: closed-loop ordinary clients of the flash-sale SKU's main stock")
)

const (
	// poolUnits is the pool's quantity and each buyer's limit: a run never
	// empties the pool, and the limit never refuses a buyer.
	poolUnits = 10_000_000
)

// flashSale is the section's SKU, its pool and, over HTTP, the group
// service's handler and the signer of its buyers' tokens.
type flashSale struct {
	item, pool int64
	url        string
	signer     *auth.Signer
	poolBody   []byte // placeOrder of one unit from the pool
}

// newFlashSale creates a one-SKU goods (deduct at order, priced like the
// hot SKU) through the catalog, books it stock as the other SKUs have, and
// moves poolUnits of it into a pool on sale for a day.
func (b *bench) newFlashSale(ctx context.Context) (*flashSale, error) {
	cat := catalog.New(b.db, catalog.DefaultConfig())
	p := money.MustParse("109.00")
	g, err := cat.Create(ctx, catalog.CreateInput{Name: "秒杀压测", Code: "BENCH-POOL", Status: enums.GoodsOnShelf,
		DefaultSku: catalog.SkuTerms{SellPrice: p, LineationPrice: p, CostPrice: p / 2}})
	if err != nil {
		return nil, err
	}
	item, err := b.db.Client.Sku.Query().Where(sku.GoodsID(g.ID)).OnlyID(ctx)
	if err != nil {
		return nil, err
	}
	if err := restock(b.db.SQL, item, 100_000_000); err != nil {
		return nil, err
	}
	now := time.Now()
	pool, err := inventory.New(b.db).MoveToPool(ctx, inventory.PoolInput{ItemID: item, Name: "bench flash sale",
		Price: money.MustParse("99.00"), Quantity: poolUnits, PerBuyerLimit: poolUnits,
		StartsAt: now.Add(-time.Minute), EndsAt: now.Add(24 * time.Hour)})
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(map[string]any{
		"query":     `mutation($id: ID!, $pool: ID!) { placeOrder(input: {items: [{itemId: $id, poolId: $pool, quantity: 1}]}) { orderSn amount } }`,
		"variables": map[string]any{"id": fmt.Sprint(item), "pool": fmt.Sprint(pool.ID)},
	})
	if err != nil {
		return nil, err
	}
	b.bodies[item] = placeBody(item)
	return &flashSale{item: item, pool: pool.ID, url: b.url["group"], signer: b.signer, poolBody: body}, nil
}

// buyer is one flash client's identity: a closed-loop client has one
// order in flight, so n clients taking buyers from a channel of n each
// order as a buyer of their own.
type buyer struct {
	id   string
	lean *leanClient // over HTTP, with the buyer's token
}

func (f *flashSale) buyers(n int) (chan buyer, error) {
	ch := make(chan buyer, n)
	for i := range n {
		u := buyer{id: fmt.Sprint("bench-flash-", i)}
		token, err := f.signer.Issue(u.id, auth.Customer, time.Hour)
		if err != nil {
			return nil, err
		}
		if u.lean, err = newLeanClient(f.url, token, 1); err != nil {
			return nil, err
		}
		ch <- u
	}
	return ch, nil
}

// flashOp is a flash client's order of one unit as its buyer, from the
// pool when fromPool, else from the SKU's main stock.
func (b *bench) flashOp(f *flashSale, transport string, buyers chan buyer, fromPool bool) func() error {
	svc := b.svc["group"]
	return func() error {
		u := <-buyers
		defer func() { buyers <- u }()
		key := fmt.Sprint("bench-", b.seq.Add(1))
		if transport == "http" {
			body := b.bodies[f.item]
			if fromPool {
				body = f.poolBody
			}
			return u.lean.post(body, key)
		}
		item := checkout.ItemInput{ItemID: &f.item, Quantity: 1}
		if fromPool {
			item.PoolID = &f.pool
		}
		_, err := svc.Place(context.Background(), checkout.PlaceInput{UserID: u.id, IdempotencyKey: key, Items: []checkout.ItemInput{item}})
		return err
	}
}

// clientSet is one kind of closed-loop client in an arm.
type clientSet struct {
	name    string
	clients int
	op      func() error
}

// together runs the sets' loops at once and returns their windows, in order.
func (b *bench) together(dur time.Duration, sets []clientSet) ([]window, error) {
	ws := make([]window, len(sets))
	errs := make([]error, len(sets))
	done := make(chan struct{})
	for i, s := range sets {
		go func() {
			defer func() { done <- struct{}{} }()
			ws[i], errs[i] = b.loop(s.clients, dur, s.op)
		}()
	}
	for range sets {
		<-done
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s clients: %w", sets[i].name, err)
		}
	}
	return ws, nil
}

// flashBooks is what the correctness line compares: the flash SKU's main
// stock and main-stock ledger, its pool's stock and ledger, the hot SKU's
// stock and ledger, the orders.
type flashBooks struct {
	main, mainLedger, pool, poolLedger, hot, hotLedger, orders int64
}

func (b *bench) flashBooks(f *flashSale) (flashBooks, error) {
	var s flashBooks
	err := b.db.SQL.QueryRow(`SELECT
  (SELECT stock FROM sku WHERE id = ?),
  (SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ? AND pool_id = 0),
  (SELECT stock FROM stock_pool WHERE id = ?),
  (SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE pool_id = ?),
  (SELECT stock FROM sku WHERE id = ?),
  (SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ?),
  (SELECT COUNT(*) FROM orders)`, f.item, f.item, f.pool, f.pool, b.hot, b.hot).
		Scan(&s.main, &s.mainLedger, &s.pool, &s.poolLedger, &s.hot, &s.hotLedger, &s.orders)
	return s, err
}

// poolArm is one arm's figures: per client set, its windows, successes
// and the group service's GroupStats over the arm's slices.
type poolArm struct {
	windows          map[string][]window
	done             map[string]int64
	batches, batched int64
	// The main connection pool's waits over the arm's slices: a transaction
	// queued on a row lock keeps its connection.
	connWaits int64
	connWait  time.Duration
	// CPU over the arm's slices: this process and the database server.
	cpu cpuSample
}

// poolRun measures the section's four arms over transport and checks the
// books: the pool fell by exactly the pool orders, main stock by exactly
// the ordinary and the no-pool flash orders, the hot SKU by its own, each
// ledger sums to its stock, the orders grew by all of them, and
// inventory's reconciliation (SKUs and pools) is clean.
func (b *bench) poolRun(f *flashSale, transport string) (map[string]*poolArm, string, bool, error) {
	ctx := context.Background()
	buyers, err := f.buyers(*poolFlash)
	if err != nil {
		return nil, "", false, err
	}
	ordinary := clientSet{"ordinary", *poolOrdinary, b.placeOp("group", transport, []int64{f.item})}
	arms := map[string][]clientSet{
		"pool":    {{"flash", *poolFlash, b.flashOp(f, transport, buyers, true)}, ordinary},
		"no pool": {{"flash", *poolFlash, b.flashOp(f, transport, buyers, false)}, ordinary},
		"quiet":   {ordinary},
		"hot":     {{"hot group", *poolFlash, b.placeOp("group", transport, []int64{b.hot})}},
		"alone":   {{"flash", *poolFlash, b.flashOp(f, transport, buyers, true)}},
	}
	order := []string{"pool", "no pool", "quiet", "hot", "alone"}
	out := map[string]*poolArm{}
	for _, name := range order {
		out[name] = &poolArm{windows: map[string][]window{}, done: map[string]int64{}}
	}
	s0, err := b.flashBooks(f)
	if err != nil {
		return nil, "", false, err
	}
	svc := b.svc["group"]
	rev := slices.Clone(order)
	slices.Reverse(rev)
	for _, name := range slices.Concat(order, rev) {
		a := out[name]
		bat0, ord0 := svc.GroupStats()
		conn0 := b.db.SQL.Stats()
		cpu0 := sampleCPU()
		ws, err := b.together(b.dur/2, arms[name])
		cpu1 := sampleCPU()
		if err != nil {
			return nil, "", false, fmt.Errorf("pool/%s/%s: %w", name, transport, err)
		}
		bat1, ord1 := svc.GroupStats()
		conn1 := b.db.SQL.Stats()
		a.batches += bat1 - bat0
		a.batched += ord1 - ord0
		a.connWaits += conn1.WaitCount - conn0.WaitCount
		a.connWait += conn1.WaitDuration - conn0.WaitDuration
		a.cpu.self += cpu1.self - cpu0.self
		a.cpu.db += cpu1.db - cpu0.db
		for i, set := range arms[name] {
			a.windows[set.name] = append(a.windows[set.name], ws[i])
			a.done[set.name] += ws[i].done
		}
	}
	s1, err := b.flashBooks(f)
	if err != nil {
		return nil, "", false, err
	}
	rec, clean, err := b.reconciled(f.item, b.hot)
	if err != nil {
		return nil, "", false, err
	}
	pools, err := inventory.New(b.db).ReconcilePools(ctx, false)
	if err != nil {
		return nil, "", false, err
	}
	poolRec := "pools balanced"
	if len(pools) > 0 {
		poolRec = fmt.Sprintf("pools NOT balanced: %+v", pools)
	}
	fromPool := out["pool"].done["flash"] + out["alone"].done["flash"]
	fromMain := out["pool"].done["ordinary"] + out["no pool"].done["ordinary"] + out["quiet"].done["ordinary"] + out["no pool"].done["flash"]
	hot := out["hot"].done["hot group"]
	ok := s0.pool-s1.pool == fromPool && s1.poolLedger == s1.pool &&
		s0.main-s1.main == fromMain && s1.mainLedger == s1.main &&
		s0.hot-s1.hot == hot && s1.hotLedger == s1.hot &&
		s1.orders-s0.orders == fromPool+fromMain+hot && clean && len(pools) == 0
	mark := "ok"
	if !ok {
		mark = "FAILED"
	}
	check := fmt.Sprintf("%s: pool orders %d, pool stock −%d, pool ledger = stock %v; main-stock orders %d, main stock −%d, main ledger = stock %v; "+
		"hot orders %d, stock −%d, ledger = stock %v; orders +%d; %s, %s",
		mark, fromPool, s0.pool-s1.pool, s1.poolLedger == s1.pool, fromMain, s0.main-s1.main, s1.mainLedger == s1.main,
		hot, s0.hot-s1.hot, s1.hotLedger == s1.hot, s1.orders-s0.orders, rec, poolRec)
	return out, check, ok, nil
}

// poolSection prints section 8 for each transport its filter admits
// (pool/<transport>/<flash clients>) and returns how many runs failed their
// correctness check.
func (b *bench) poolSection() (int, error) {
	var f *flashSale
	bad := 0
	for _, tr := range []string{"in-process", "http"} {
		if !cellFilter.MatchString(fmt.Sprintf("pool/%s/%d", tr, *poolFlash)) {
			continue
		}
		if f == nil {
			var err error
			if f, err = b.newFlashSale(context.Background()); err != nil {
				return bad, fmt.Errorf("section 8: %w", err)
			}
			fmt.Printf("\n8. stock pools (issue 18): a flash sale of one SKU at %d clients (each its own buyer; pool of %d, limit %d a buyer)\n", *poolFlash, poolUnits, poolUnits)
			fmt.Printf("   and %d ordinary clients of the same SKU's main stock, on the group service, interleaved\n", *poolOrdinary)
			fmt.Println("   (pool, no pool, quiet, hot, alone, alone, hot, quiet, no pool, pool); batches/orders (the service's GroupStats) and")
			fmt.Println("   conn waits (waits for a connection of the main pool, and their total time) and CPU per order (this process, the")
			fmt.Println("   database server) are over the arm, all its clients")
			fmt.Printf("   %-11s %-8s %-10s %7s %9s %8s %8s %17s %16s %9s %9s\n", "transport", "arm", "orders", "clients", "orders/s", "p50 ms", "p99 ms", "batches/orders", "conn waits", "go µs/op", "db µs/op")
		}
		arms, check, ok, err := b.poolRun(f, tr)
		if err != nil {
			return bad, err
		}
		if !ok {
			bad++
		}
		res := func(arm, set string) result { return stats(arms[arm].windows[set]...) }
		for _, row := range []struct{ arm, set string }{
			{"pool", "flash"}, {"pool", "ordinary"}, {"no pool", "flash"}, {"no pool", "ordinary"}, {"quiet", "ordinary"}, {"hot", "hot group"}, {"alone", "flash"},
		} {
			a, r := arms[row.arm], res(row.arm, row.set)
			n := *poolOrdinary
			if row.set != "ordinary" {
				n = *poolFlash
			}
			group, waits, goCPU, dbCPU := "", "", "", ""
			if row.set != "ordinary" || row.arm == "quiet" {
				group = fmt.Sprintf("%d/%d", a.batches, a.batched)
				waits = fmt.Sprintf("%d (%.1f)", a.connWaits, a.connWait.Seconds())
				goCPU, dbCPU = perOrder(a.cpu.self, a.batched), perOrder(a.cpu.db, a.batched)
			}
			fmt.Printf("   %-11s %-8s %-10s %7d %9.0f %8.2f %8.2f %17s %16s %9s %9s\n", tr, row.arm, row.set, n, r.rate, r.p50, r.p99, group, waits, goCPU, dbCPU)
		}
		p99 := func(arm string) float64 { return res(arm, "ordinary").p99 }
		hot := res("hot", "hot group").rate
		fmt.Printf("   %-11s ordinary p99 pool/quiet %s (target ≤ 2), pool/no pool %s (p50 %s); flash orders/s over the hot group's: pool %s, no pool %s, pool alone %s\n",
			tr, ratio(p99("pool"), p99("quiet")), ratio(p99("pool"), p99("no pool")),
			ratio(res("pool", "ordinary").p50, res("no pool", "ordinary").p50),
			ratio(res("pool", "flash").rate, hot), ratio(res("no pool", "flash").rate, hot), ratio(res("alone", "flash").rate, hot))
		fmt.Printf("   %-11s %s\n", tr, check)
	}
	return bad, nil
}

// perOrder is CPU time d over n orders in µs ("-" without either).
func perOrder(d time.Duration, n int64) string {
	if d == 0 || n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", float64(d.Microseconds())/float64(n))
}
