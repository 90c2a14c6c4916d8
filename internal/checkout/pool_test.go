package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// newPool moves quantity of SKU id into a pool on sale from the fixture's
// clock for an hour.
func (f *fixture) newPool(t *testing.T, id, quantity, limit int64, starts time.Duration) *inventory.Pool {
	t.Helper()
	now := time.Now()
	p, err := inventory.New(f.db).MoveToPool(context.Background(), inventory.PoolInput{ItemID: id, Name: "秒杀", Price: 990,
		Quantity: quantity, PerBuyerLimit: limit, StartsAt: now.Add(starts), EndsAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatalf("MoveToPool: %v", err)
	}
	return p
}

func fromPool(id, pool, qty int64) ItemInput {
	return ItemInput{ItemID: &id, PoolID: &pool, Quantity: qty}
}

// ledgerStock sets SKU id's main stock to n through inventory (setStock to
// 0, then an adjustment of n): unlike setStock alone, the adjustment also
// tells the listing, which the pool tests reconcile.
func (f *fixture) ledgerStock(t *testing.T, id, n int64) {
	t.Helper()
	f.setStock(t, id, 0)
	if _, err := inventory.New(f.db).Adjust(context.Background(), inventory.AdjustInput{ItemID: id, Delta: n, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
}

// poolState is a pool's stock and the sum of its ledger rows.
func (f *fixture) poolState(t *testing.T, pool int64) (stock, ledger int64) {
	t.Helper()
	if err := f.db.SQL.QueryRow("SELECT stock FROM stock_pool WHERE id = ?", pool).Scan(&stock); err != nil {
		t.Fatal(err)
	}
	if err := f.db.SQL.QueryRow("SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE pool_id = ?", pool).Scan(&ledger); err != nil {
		t.Fatal(err)
	}
	return stock, ledger
}

// mainLedger is the sum of a SKU's main-stock ledger rows.
func (f *fixture) mainLedger(t *testing.T, id int64) (sum int64) {
	t.Helper()
	if err := f.db.SQL.QueryRow("SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ? AND pool_id = 0", id).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	return sum
}

// poolsBalance fails t unless every SKU matches its ledger and every pool
// balances (inventory.ReconcilePools).
func (f *fixture) poolsBalance(t *testing.T) {
	t.Helper()
	inv := inventory.New(f.db)
	if diffs, err := inv.Reconcile(context.Background(), 100); err != nil || len(diffs) != 0 {
		t.Errorf("Reconcile: %+v, %v; want no difference", diffs, err)
	}
	if pools, err := inv.ReconcilePools(context.Background(), false); err != nil || len(pools) != 0 {
		t.Errorf("ReconcilePools: %+v, %v; want every pool balanced", pools, err)
	}
	// Pools move main stock too (the return, a release after it): the
	// listing's kept "in stock" must follow.
	if diffs, err := listing.Reconcile(context.Background(), f.db.Client, 100); err != nil || len(diffs) != 0 {
		t.Errorf("listing.Reconcile: %+v, %v; want no difference", diffs, err)
	}
}

// Ordering from a pool: the pool's price, the pool's row (main stock and
// the SKU's version never move), refusals outside the window, when empty
// and past the per-buyer limit.
func TestOrderFromPool(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, pth path) {
		ctx := context.Background()
		f := setup(t, db, pth)
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 10)
		later := f.newPool(t, id, 2, 5, 30*time.Minute)
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, later.ID, 1)}}); !errors.Is(err, inventory.ErrPoolNotActive) {
			t.Errorf("ordering before the pool starts: %v, want POOL_NOT_ACTIVE", err)
		}
		p := f.newPool(t, id, 3, 2, -time.Minute)
		before, _ := db.Client.Sku.Get(ctx, id)
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 2)}})
		if err != nil {
			t.Fatalf("ordering 2 from the pool: %v", err)
		}
		if o.Amount != 2*990 || o.Lines[0].UnitPrice != 990 || o.Lines[0].PoolID != p.ID {
			t.Errorf("pool order: amount %v, line %+v; want 19.80 at the pool's 9.90 from pool %d", o.Amount, o.Lines[0], p.ID)
		}
		if after, _ := db.Client.Sku.Get(ctx, id); after.Stock != before.Stock || after.Version != before.Version {
			t.Errorf("main stock moved for a pool order: stock %d → %d, version %d → %d", before.Stock, after.Stock, before.Version, after.Version)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 1 || ledger != 1 {
			t.Errorf("pool after the order: stock %d, ledger %d; want 1, 1", stock, ledger)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 1)}}); !errors.Is(err, inventory.ErrPoolLimitExceeded) {
			t.Errorf("a third unit for a buyer with limit 2: %v, want POOL_LIMIT_EXCEEDED", err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(id, p.ID, 2)}}); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("2 from a pool with 1 left: %v, want OUT_OF_STOCK (never main stock)", err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(id, p.ID, 1), one(id, 1)}}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("one SKU from the pool and from main stock in one order: %v, want INVALID_INPUT", err)
		}
		other := f.skuID(t, "白色,L")
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(other, p.ID, 1)}}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("a pool of another SKU: %v, want INVALID_INPUT", err)
		}
		if after, _ := db.Client.Sku.Get(ctx, id); after.Stock != before.Stock {
			t.Errorf("main stock %d after refused pool orders, want %d", after.Stock, before.Stock)
		}
		// The cancel gives the units back to the pool and to the buyer's limit.
		if _, err := f.svc.CancelOrder(ctx, "u1", false, o.OrderSn); err != nil {
			t.Fatal(err)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 3 || ledger != 3 {
			t.Errorf("pool after the cancel: stock %d, ledger %d; want 3, 3", stock, ledger)
		}
		o2, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", IdempotencyKey: "again", Items: []ItemInput{fromPool(id, p.ID, 2)}})
		if err != nil {
			t.Fatalf("the buyer's 2 again after their cancel: %v", err)
		}
		// The close returns the remainder (1); a cancel after it restores to main stock.
		if _, err := inventory.New(db).ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u3", Items: []ItemInput{fromPool(id, p.ID, 1)}}); !errors.Is(err, inventory.ErrPoolNotActive) {
			t.Errorf("ordering after the pool was closed: %v, want POOL_NOT_ACTIVE", err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u1", false, o2.OrderSn); err != nil {
			t.Fatal(err)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 0 || ledger != 0 {
			t.Errorf("pool after its end and a later cancel: stock %d, ledger %d; want 0, 0", stock, ledger)
		}
		// 10 opening - 2 (later pool) - 3 (this pool) + 1 (returned) + 2 (the cancel after the end)
		if after, _ := db.Client.Sku.Get(ctx, id); after.Stock != 8 || f.mainLedger(t, id) != 8 {
			t.Errorf("main stock %d (ledger %d) after the end and a cancel, want 8", after.Stock, f.mainLedger(t, id))
		}
		var rows int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE biz_sn = ? AND change_type = 3 AND pool_id = 0", o2.OrderSn).Scan(&rows); err != nil || rows != 1 {
			t.Errorf("%d main-stock restore rows of the order cancelled after the end (%v), want 1", rows, err)
		}
		f.poolsBalance(t)
		f.advance(2 * time.Hour)
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u3", Items: []ItemInput{fromPool(id, later.ID, 1)}}); !errors.Is(err, inventory.ErrPoolNotActive) {
			t.Errorf("ordering after the pool's endsAt: %v, want POOL_NOT_ACTIVE", err)
		}
	})
}

// A buyer firing 20 orders at once with different keys gets at most the
// limit, on the real database.
func TestPoolLimitUnderConcurrency(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, pth path) {
		ctx := context.Background()
		f := setup(t, db, pth)
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 100)
		p := f.newPool(t, id, 50, 2, -time.Minute)
		var ok, units atomic.Int64
		var mu sync.Mutex
		other := map[string]int{}
		race(20, 20, func(i int) {
			qty := int64(1 + i%2)
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "greedy", IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{fromPool(id, p.ID, qty)}})
			switch {
			case err == nil:
				ok.Add(1)
				units.Add(o.Lines[0].Quantity)
			case errors.Is(err, inventory.ErrPoolLimitExceeded):
			default:
				mu.Lock()
				other[err.Error()]++
				mu.Unlock()
			}
		})
		if len(other) != 0 {
			t.Errorf("errors other than POOL_LIMIT_EXCEEDED: %v", other)
		}
		if units.Load() > 2 || units.Load() == 0 {
			t.Errorf("the buyer got %d units in %d orders, want 1 or 2 (limit 2)", units.Load(), ok.Load())
		}
		stock, ledger := f.poolState(t, p.ID)
		if stock != 50-units.Load() || ledger != stock {
			t.Errorf("pool stock %d, ledger %d; want %d", stock, ledger, 50-units.Load())
		}
		var counted int64
		if err := db.SQL.QueryRow("SELECT units FROM pool_buyer WHERE pool_id = ? AND user_id = ?", p.ID, "greedy").Scan(&counted); err != nil || counted != units.Load() {
			t.Errorf("the buyer's counter %d (%v), want %d", counted, err, units.Load())
		}
		f.poolsBalance(t)
	})
}

// A one-SKU order by id from one pool is groupable, as from main stock; its
// source is the pool, so its batches pipeline apart from the SKU's own. An
// order naming the SKU from two sources is not (the plain path refuses it).
func TestPoolOrdersAreGroupable(t *testing.T) {
	s := &Service{cfg: DefaultConfig()}
	s.cfg.GroupCommit = true
	id, pool := int64(7), int64(3)
	if src, ok := s.groupable(PlaceInput{Items: []ItemInput{one(id, 1)}}); !ok || src != (source{id, 0}) {
		t.Errorf("a main-stock order: groupable %v, source %+v; want true, {%d 0}", ok, src, id)
	}
	if src, ok := s.groupable(PlaceInput{Items: []ItemInput{fromPool(id, pool, 1), fromPool(id, pool, 2)}}); !ok || src != (source{id, pool}) {
		t.Errorf("a pool order: groupable %v, source %+v; want true, {%d %d}", ok, src, id, pool)
	}
	if _, ok := s.groupable(PlaceInput{Items: []ItemInput{fromPool(id, pool, 1), one(id, 1)}}); ok {
		t.Errorf("an order of one SKU from a pool and main stock is groupable, want the plain path")
	}
	if got := sourcesOf([]*ticket{{item: 9, pool: 2}, {item: 8}, {item: 3, pool: 5}, {item: 9}, {item: 8}}); fmt.Sprint(got) != "[{8 0} {9 0} {9 2} {3 5}]" {
		t.Errorf("sourcesOf: %v, want main stock by SKU, then pools by id: [{8 0} {9 0} {9 2} {3 5}]", got)
	}
}

// Pool orders on the group path: many buyers at once go in batches of
// several orders; the pool's row and ledger move by exactly what sold, the
// SKU's row (stock, version) never moves, every buyer's counter is right,
// and everything reconciles.
func TestPoolOrdersInBatches(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 500)
		p := f.newPool(t, id, 300, 3, -time.Minute)
		var version int64
		if err := db.SQL.QueryRow("SELECT version FROM sku WHERE id = ?", id).Scan(&version); err != nil {
			t.Fatal(err)
		}
		const buyers = 120
		var units [buyers]atomic.Int64
		var failed sync.Map
		// Each buyer asks 1, 2, 1, 2 …: 4 orders a buyer, so some pass the
		// limit of 3 and are refused, some inside one batch.
		race(4*buyers, 48, func(i int) {
			b, qty := i%buyers, int64(1+(i/buyers)%2)
			o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("b", b), IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{fromPool(id, p.ID, qty)}})
			switch {
			case err == nil:
				units[b].Add(o.Lines[0].Quantity)
			case errors.Is(err, inventory.ErrPoolLimitExceeded), errors.Is(err, inventory.ErrOutOfStock):
			default:
				failed.Store(err.Error(), true)
			}
		})
		failed.Range(func(k, _ any) bool { t.Errorf("unexpected error: %v", k); return true })
		var sold int64
		for b := range buyers {
			n := units[b].Load()
			if n > 3 {
				t.Errorf("buyer b%d got %d units, limit 3", b, n)
			}
			var counted int64
			if err := db.SQL.QueryRow("SELECT COALESCE(MAX(units), 0) FROM pool_buyer WHERE pool_id = ? AND user_id = ?", p.ID, fmt.Sprint("b", b)).Scan(&counted); err != nil || counted != n {
				t.Errorf("buyer b%d: counter %d (%v), want %d", b, counted, err, n)
			}
			sold += n
		}
		if sold != 300 {
			t.Errorf("sold %d units, want the whole pool of 300 (4 orders of 1–2 from 120 buyers ask for more)", sold)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 300-sold || ledger != stock {
			t.Errorf("pool stock %d, ledger %d; want %d", stock, ledger, 300-sold)
		}
		var v int64
		if err := db.SQL.QueryRow("SELECT version FROM sku WHERE id = ?", id).Scan(&v); err != nil || v != version || f.stock(t, id) != 200 {
			t.Errorf("SKU version %d → %d, stock %d: the SKU's row moved (want version unchanged, stock 200)", version, v, f.stock(t, id))
		}
		batches, orders := f.svc.GroupStats()
		if orders == 0 || batches >= orders {
			t.Errorf("group path: %d batches for %d orders, want batches of more than one order", batches, orders)
		}
		t.Logf("%d batches, %d orders", batches, orders)
		f.poolsBalance(t)
	})
}

// Issue 18's flash sale: a pool of 1000 on a SKU with 500 on main stock,
// limit 2; 3000 flash buyers (asking 1 or 2, every tenth firing three keys
// at once) race 100 ordinary buyers of the same SKU from main stock. The
// pool sells exactly 1000, no buyer gets more than 2, main stock falls by
// exactly the ordinary orders, every ordinary order succeeds, and the
// ledger and the pools reconcile. Production defaults: both kinds take the
// group path, each in its own lane.
func TestFlashSaleFromPool(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 1500)
		p := f.newPool(t, id, 1000, 2, -time.Minute)
		const buyers, ordinary = 3000, 100
		type req struct {
			user string
			qty  int64
			key  string
			pool bool
		}
		var reqs []req
		for b := range buyers {
			qty := int64(1 + b%2)
			keys := 1
			if b%10 == 0 {
				keys = 3
			}
			for k := range keys {
				reqs = append(reqs, req{fmt.Sprint("flash-", b), qty, fmt.Sprint("f", b, "-", k), true})
			}
		}
		for o := range ordinary {
			// Spread among the flash requests, so they race the sale.
			at := (o * len(reqs)) / ordinary
			reqs = append(reqs[:at], append([]req{{fmt.Sprint("plain-", o), 1, fmt.Sprint("o", o), false}}, reqs[at:]...)...)
		}
		var (
			mu         sync.Mutex
			got        = map[string]int64{}
			plainOK    int
			plainErrs  []error
			unexpected = map[string]int{}
		)
		race(len(reqs), 64, func(i int) {
			r := reqs[i]
			item := one(id, r.qty)
			if r.pool {
				item = fromPool(id, p.ID, r.qty)
			}
			o, err := f.svc.Place(ctx, PlaceInput{UserID: r.user, IdempotencyKey: r.key, Items: []ItemInput{item}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !r.pool && err == nil:
				plainOK++
			case !r.pool:
				plainErrs = append(plainErrs, err)
			case err == nil:
				got[r.user] += o.Lines[0].Quantity
			case errors.Is(err, inventory.ErrOutOfStock), errors.Is(err, inventory.ErrPoolLimitExceeded):
			default:
				unexpected[err.Error()]++
			}
		})
		if plainOK != ordinary {
			t.Errorf("%d of %d ordinary orders succeeded; errors: %v", plainOK, ordinary, plainErrs)
		}
		if len(unexpected) != 0 {
			t.Errorf("flash-sale errors other than OUT_OF_STOCK and POOL_LIMIT_EXCEEDED: %v", unexpected)
		}
		var sold int64
		for u, n := range got {
			if n > 2 {
				t.Errorf("buyer %s got %d units, limit 2", u, n)
			}
			sold += n
		}
		if sold != 1000 {
			t.Errorf("the pool sold %d units, want exactly 1000", sold)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 0 || ledger != 0 {
			t.Errorf("pool stock %d, ledger %d after the sale; want 0, 0", stock, ledger)
		}
		if s := f.stock(t, id); s != 500-ordinary || f.mainLedger(t, id) != s {
			t.Errorf("main stock %d (ledger %d), want %d: 500 less the ordinary orders only", s, f.mainLedger(t, id), 500-ordinary)
		}
		f.poolsBalance(t)
	})
}

// In one batch, as one by one: pool orders are allocated in arrival order
// from the pool's stock and within each buyer's limit, a refused order does
// not stop later smaller ones, a main-stock order of the same SKU queued
// among them takes main stock (in its own lane's batch), and the pool's
// ledger rows chain in arrival order. Then everything reconciles.
func TestGroupPoolBatchAllocatesInArrivalOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 10)
		p := f.newPool(t, id, 4, 2, -time.Minute)
		hold(f, id)
		type o struct {
			user string
			qty  int64
			pool bool
		}
		var ins []PlaceInput
		for i, x := range []o{{"A", 2, true}, {"A", 1, true}, {"B", 1, true}, {"C", 2, true}, {"D", 1, false}, {"C", 1, true}, {"E", 1, true}} {
			item := one(id, x.qty)
			if x.pool {
				item = fromPool(id, p.ID, x.qty)
			}
			ins = append(ins, PlaceInput{UserID: x.user, IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{item}})
		}
		orders, errs := enqueue(t, f, id, ins)()
		checkOutcomes(t, orders, errs, nil, inventory.ErrPoolLimitExceeded, nil, ErrOutOfStock, nil, nil, ErrOutOfStock)
		if b, n := f.svc.GroupStats(); b != 2 || n != 7 {
			t.Errorf("GroupStats = %d batches, %d orders; want 2 (the pool's 6 orders, main stock's 1: the lanes batch apart)", b, n)
		}
		if orders[0].Amount != 2*990 || orders[4].Amount == orders[2].Amount {
			t.Errorf("amounts %v (pool) and %v (main): want the pool's price 9.90 a unit for pool orders only", orders[0].Amount, orders[4].Amount)
		}
		rows, err := db.SQL.Query("SELECT biz_sn, before_stock, after_stock FROM stock_log WHERE pool_id = ? AND change_type = 1 ORDER BY id", p.ID)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for rows.Next() {
			var sn string
			var b, a int64
			if err := rows.Scan(&sn, &b, &a); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s %d→%d", sn, b, a))
		}
		rows.Close()
		if want := fmt.Sprint([]string{orders[0].OrderSn + " 4→2", orders[2].OrderSn + " 2→1", orders[5].OrderSn + " 1→0"}); fmt.Sprint(got) != want {
			t.Errorf("pool ledger = %v, want %v", got, want)
		}
		if stock, ledger := f.poolState(t, p.ID); stock != 0 || ledger != 0 {
			t.Errorf("pool stock %d, ledger %d; want 0, 0", stock, ledger)
		}
		if s := f.stock(t, id); s != 5 || f.mainLedger(t, id) != 5 {
			t.Errorf("main stock %d (ledger %d), want 5: 10, less 4 into the pool, less D's 1", s, f.mainLedger(t, id))
		}
		for user, want := range map[string]int64{"A": 2, "B": 1, "C": 1} {
			var n int64
			if err := db.SQL.QueryRow("SELECT units FROM pool_buyer WHERE pool_id = ? AND user_id = ?", p.ID, user).Scan(&n); err != nil || n != want {
				t.Errorf("buyer %s: counter %d (%v), want %d", user, n, err, want)
			}
		}
		f.poolsBalance(t)
	})
}

// The lanes: with every batch slot of the pool lane taken (a flash sale in
// flight), an order from main stock starts at once in its own lane, and a
// pool order waits for its lane.
func TestGroupLanes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 10)
		p := f.newPool(t, id, 4, 2, -time.Minute)
		g := &f.svc.groups
		g.mu.Lock()
		g.running[1] += f.svc.cfg.GroupInFlight // the pool lane is full
		g.mu.Unlock()
		if _, err := f.svc.Place(bounded(t), PlaceInput{UserID: "shop", Items: []ItemInput{one(id, 1)}}); err != nil {
			t.Fatalf("a main-stock order with the pool lane full: %v", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.svc.Place(bounded(t), PlaceInput{UserID: "flash", Items: []ItemInput{fromPool(id, p.ID, 1)}})
			done <- err
		}()
		wait.For(t, "the pool order queues", func() bool { return queued(f) == 1 })
		select {
		case err := <-done:
			t.Fatalf("the pool order finished (%v) with its lane full, want it queued", err)
		default:
		}
		g.mu.Lock()
		g.running[1] -= f.svc.cfg.GroupInFlight
		g.mu.Unlock()
		f.svc.handOver(nil, 0)
		if err := <-done; err != nil {
			t.Errorf("the pool order once its lane is free: %v", err)
		}
		f.poolsBalance(t)
	})
}

// A pool's batches rest: while the pool rests (as after a batch that ran
// as long) its orders queue, even with nothing in flight, and the rest's
// end starts them by itself; each batch takes at most PoolBatchMax.
func TestPoolBatchRestsAndIsCapped(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		f.svc.cfg.PoolBatchMax = 4
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 50)
		p := f.newPool(t, id, 40, 1, -time.Minute)
		g := &f.svc.groups
		restEnds := time.Now().Add(300 * time.Millisecond)
		g.mu.Lock()
		g.rest[p.ID] = restEnds
		g.mu.Unlock()
		batches0, orders0 := f.svc.GroupStats()
		const n = 10
		errs := make(chan error, n)
		for i := range n {
			go func() {
				_, err := f.svc.Place(bounded(t), PlaceInput{UserID: fmt.Sprint("flash-", i), Items: []ItemInput{fromPool(id, p.ID, 1)}})
				errs <- err
			}()
		}
		// Each arrival would start a batch at once were the pool not resting.
		wait.For(t, "every pool order queues while the pool rests", func() bool { return queued(f) == n })
		for range n {
			if err := <-errs; err != nil {
				t.Errorf("a pool order after the rest: %v", err)
			}
		}
		if now := time.Now(); now.Before(restEnds) {
			t.Errorf("the orders were answered %v before the rest ended", restEnds.Sub(now))
		}
		batches, orders := f.svc.GroupStats()
		if orders-orders0 != n || batches-batches0 < n/4+1 {
			t.Errorf("%d orders in %d batches, want %d orders in at least %d (at most 4 a batch)", orders-orders0, batches-batches0, n, n/4+1)
		}
		f.poolsBalance(t)
	})
}

// A pool rests only beside the shop's orders: after a batch that ran
// alone it may go again at once; after one that ran while a main-stock
// batch was in flight, it rests.
func TestPoolRestsOnlyBesideTheShop(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 50)
		p := f.newPool(t, id, 40, 5, -time.Minute)
		g := &f.svc.groups
		// Whether the last batch left the pool a rest: on SQLite a batch
		// runs for well under a millisecond, and its rest may be over
		// before anyone looks.
		resting := func() bool {
			g.mu.Lock()
			defer g.mu.Unlock()
			_, ok := g.rest[p.ID]
			return ok
		}
		order := func(user string) {
			t.Helper()
			if _, err := f.svc.Place(bounded(t), PlaceInput{UserID: user, Items: []ItemInput{fromPool(id, p.ID, 1)}}); err != nil {
				t.Fatalf("a pool order: %v", err)
			}
			// A batch answers its buyers before it hands over.
			wait.For(t, "the pool's batch ends", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.running[poolLane] == 0 })
		}
		order("alone")
		if resting() {
			t.Errorf("the pool rests after a batch that ran with no main-stock batch in flight")
		}
		g.mu.Lock()
		g.running[0]++ // a main-stock batch in flight
		g.mu.Unlock()
		order("beside the shop")
		if !resting() {
			t.Errorf("the pool does not rest after a batch that ran beside a main-stock batch")
		}
		g.mu.Lock()
		g.running[0]--
		g.mu.Unlock()
	})
}

// One order with lines from two pools (two SKUs of one goods, each on a
// sale of its own): each pool sells its line at its own price and counts
// the buyer against its own limit, main stock never moves, a second order
// past one pool's limit is refused whole, and the cancel gives each line
// back to its own pool.
func TestOrderFromTwoPools(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, pth path) {
		ctx := context.Background()
		f := setup(t, db, pth)
		black, white := f.skuID(t, "黑色,L"), f.skuID(t, "白色,L")
		f.ledgerStock(t, black, 10)
		f.ledgerStock(t, white, 10)
		pb := f.newPool(t, black, 5, 2, -time.Minute)
		pw := f.newPool(t, white, 5, 3, -time.Minute)
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(white, pw.ID, 3), fromPool(black, pb.ID, 2)}})
		if err != nil {
			t.Fatalf("an order from two pools: %v", err)
		}
		if o.Amount != 5*990 || len(o.Lines) != 2 {
			t.Errorf("amount %v with %d lines, want 49.50 in 2", o.Amount, len(o.Lines))
		}
		for _, l := range o.Lines {
			if want := map[int64]int64{black: pb.ID, white: pw.ID}[l.ItemID]; l.PoolID != want {
				t.Errorf("line of SKU %d from pool %d, want %d", l.ItemID, l.PoolID, want)
			}
		}
		for pool, want := range map[int64]int64{pb.ID: 3, pw.ID: 2} {
			if stock, ledger := f.poolState(t, pool); stock != want || ledger != want {
				t.Errorf("pool %d after the order: stock %d, ledger %d; want %d", pool, stock, ledger, want)
			}
		}
		for _, id := range []int64{black, white} {
			if s := f.stock(t, id); s != 5 || f.mainLedger(t, id) != 5 {
				t.Errorf("SKU %d main stock %d (ledger %d), want 5: moved into its pool, never sold from", id, s, f.mainLedger(t, id))
			}
		}
		// The buyer is at the black pool's limit (2): an order of one more
		// black is refused whole, its white line with it.
		_, err = f.svc.Place(ctx, PlaceInput{UserID: "u1", IdempotencyKey: "more", Items: []ItemInput{fromPool(black, pb.ID, 1), fromPool(white, pw.ID, 1)}})
		if !errors.Is(err, inventory.ErrPoolLimitExceeded) {
			t.Errorf("past one pool's limit: %v, want POOL_LIMIT_EXCEEDED", err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(black, pb.ID, 1), fromPool(white, pw.ID, 3)}}); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("3 from a pool with 2 left beside 1 from the other: %v, want OUT_OF_STOCK", err)
		}
		for pool, want := range map[int64]int64{pb.ID: 3, pw.ID: 2} {
			if stock, _ := f.poolState(t, pool); stock != want {
				t.Errorf("pool %d after the refused orders: stock %d, want %d", pool, stock, want)
			}
		}
		if _, err := f.svc.CancelOrder(ctx, "u1", false, o.OrderSn); err != nil {
			t.Fatal(err)
		}
		for _, pool := range []int64{pb.ID, pw.ID} {
			if stock, ledger := f.poolState(t, pool); stock != 5 || ledger != 5 {
				t.Errorf("pool %d after the cancel: stock %d, ledger %d; want 5", pool, stock, ledger)
			}
		}
		var restores int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE biz_sn = ? AND change_type = 3 AND pool_id IN (?, ?)", o.OrderSn, pb.ID, pw.ID).Scan(&restores); err != nil || restores != 2 {
			t.Errorf("%d pool restore rows of the cancel (%v), want 2: one per line, each on its pool", restores, err)
		}
		f.poolsBalance(t)
	})
}

// The rest's other trigger (MySQL, where lanes share no writer): a
// main-stock batch that starts and ends while the pool's batch runs leaves
// nothing in flight when the pool's batch ends, yet the sale ran beside
// the shop, so the pool rests.
func TestPoolRestsAfterAShopBatchInsideIt(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 50)
		p := f.newPool(t, id, 40, 5, -time.Minute)
		g := &f.svc.groups
		paused, resume := make(chan struct{}), make(chan struct{})
		var reached atomic.Int32
		f.svc.hook = func(stage string) error {
			if stage == "unlocked" && reached.Add(1) == 1 { // the pool's batch, the first to get here
				close(paused)
				<-resume
			}
			return nil
		}
		done := make(chan error, 1)
		go func() {
			_, err := f.svc.Place(bounded(t), PlaceInput{UserID: "flash", Items: []ItemInput{fromPool(id, p.ID, 1)}})
			done <- err
		}()
		<-paused
		if _, err := f.svc.Place(bounded(t), PlaceInput{UserID: "shop", Items: []ItemInput{one(id, 1)}}); err != nil {
			t.Fatalf("a main-stock order while the pool's batch runs: %v", err)
		}
		wait.For(t, "the main-stock batch ends", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.running[0] == 0 })
		close(resume)
		if err := <-done; err != nil {
			t.Fatalf("the pool order: %v", err)
		}
		wait.For(t, "the pool's batch ends", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.running[poolLane] == 0 })
		g.mu.Lock()
		_, resting := g.rest[p.ID]
		g.mu.Unlock()
		if !resting {
			t.Errorf("the pool does not rest after a batch inside which a main-stock batch ran")
		}
	})
}
