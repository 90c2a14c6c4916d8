package catalog

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// fakeClock replaces time.Now in the cache so tests step past the TTL
// instead of sleeping.
type fakeClock struct{ ns atomic.Int64 }

func (c *fakeClock) now() time.Time       { return time.Unix(0, c.ns.Load()) }
func (c *fakeClock) step(d time.Duration) { c.ns.Add(int64(d)) }

func newCached(t *testing.T, db *store.DB) (*Service, *fakeClock) {
	t.Helper()
	s := New(db, DefaultConfig())
	t.Cleanup(s.Close)
	clk := &fakeClock{}
	clk.ns.Store(time.Now().UnixNano())
	s.cache.now = clk.now
	return s, clk
}

// createShirt makes a 2 × 3 goods with stock 5 per SKU.
func createShirt(t *testing.T, s *Service, code string) *Goods {
	t.Helper()
	g, err := s.Create(context.Background(), CreateInput{
		Name: "T恤 " + code, Code: code, Status: enums.GoodsOnShelf,
		Specs:      []SpecInput{{Name: "颜色", Values: []string{"黑色", "白色"}}, {Name: "尺码", Values: []string{"S", "M", "L"}}},
		DefaultSku: SkuTerms{SellPrice: money.MustParse("99.00"), Stock: 5},
	})
	// Tests index into the SKU list: a short one must fail here, not panic there.
	if err != nil || g == nil || len(g.SkuList(false)) != 6 {
		t.Fatalf("Create = %v, %v", g, err)
	}
	return g
}

func mustView(t *testing.T, s *Service, v Viewer, id int64) *Goods {
	t.Helper()
	g, err := s.Goods(context.Background(), v, id)
	if err != nil || g == nil {
		t.Fatalf("Goods(%d) = %v, %v", id, g, err)
	}
	return g
}

// A cold product page costs exactly four statements (goods, specs, spec
// values, SKUs); a warm one none; after the stock TTL one statement re-checks
// it, and only stock moves: the catalog part (index, spec keys) is reused.
func TestCacheQueriesAndStockTTL(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		s, clk := newCached(t, db)
		id := createShirt(t, s, "TTL").ID
		s.changed(id) // forget what Create put in the cache: measure a cold page

		n.Store(0)
		g1 := mustView(t, s, Viewer{}, id)
		if got := n.Load(); got != 4 {
			t.Errorf("cold product page: %d statements, want 4", got)
		}
		n.Store(0)
		if g2 := mustView(t, s, Viewer{}, id); g2 != g1 || n.Load() != 0 {
			t.Errorf("warm product page: same view %v, %d statements; want the shared view and 0", g2 == g1, n.Load())
		}

		// Checkout moves stock in the database; the page may show the old
		// number until the TTL passes, then exactly one query refreshes it.
		hot := g1.SkuList(false)[0]
		must.NoErr(t, db.Client.Sku.UpdateOneID(hot.ID).AddStock(-2).AddStockVersion(1).Exec(ctx)) // as checkout's CAS does
		if g := mustView(t, s, Viewer{}, id); g.SkuList(false)[0].Stock != 5 {
			t.Errorf("within the TTL stock = %d, want the cached 5", g.SkuList(false)[0].Stock)
		}
		clk.step(DefaultStockTTL)
		n.Store(0)
		g3 := mustView(t, s, Viewer{}, id)
		if got := n.Load(); got != 1 {
			t.Errorf("revalidation: %d statements, want 1", got)
		}
		if g3 == g1 || g3.SkuList(false)[0].Stock != 3 || g3.TotalStock() != g1.TotalStock()-2 {
			t.Errorf("after the TTL stock = %d, total %d; want 3, %d", g3.SkuList(false)[0].Stock, g3.TotalStock(), g1.TotalStock()-2)
		}
		if s := g3.SkuList(false)[0]; s.StockVersion != hot.StockVersion+1 || s.Version != hot.Version {
			t.Errorf("after the TTL SKU versions = %d (stock %d), want %d (stock %d): stock moves bump the stock's only", s.Version, s.StockVersion, hot.Version, hot.StockVersion+1)
		}
		if g3.cat != g1.cat {
			t.Error("a stock refresh rebuilt the catalog part")
		}
		if g1.SkuList(false)[0].Stock != 5 {
			t.Error("a stock refresh mutated a view requests may still be reading")
		}
		// Nothing moved: the same view stays, one statement again.
		clk.step(DefaultStockTTL)
		n.Store(0)
		if g4 := mustView(t, s, Viewer{}, id); g4 != g3 || n.Load() != 1 {
			t.Errorf("unchanged revalidation: same view %v, %d statements; want true, 1", g4 == g3, n.Load())
		}
		st := s.CacheStats()
		if st.Hits < 2 || st.Revalidations != 2 || st.Reloads < 1 {
			t.Errorf("CacheStats = %+v", st)
		}
	})
}

// An edit through this instance (changed) shows on its very next read; another
// instance shows it once its TTL has passed.
func TestCacheEditVisibility(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		a, _ := newCached(t, db)
		b, clkB := newCached(t, db)
		id := createShirt(t, a, "EDIT").ID
		mustView(t, a, Viewer{}, id)
		mustView(t, b, Viewer{}, id)

		must.NoErr(t, db.Client.Goods.UpdateOneID(id).SetName("改名").AddVersion(1).Exec(ctx))
		a.changed(id)
		if g := mustView(t, a, Viewer{}, id); g.Name != "改名" || g.Version != 2 {
			t.Errorf("editing instance, next read: %q v%d, want 改名 v2", g.Name, g.Version)
		}
		if g := mustView(t, b, Viewer{}, id); g.Name == "改名" {
			t.Log("other instance saw the edit early (allowed, not expected)")
		}
		clkB.step(DefaultStockTTL)
		n.Store(0)
		if g := mustView(t, b, Viewer{}, id); g.Name != "改名" || g.Version != 2 {
			t.Errorf("other instance after the TTL: %q v%d, want 改名 v2", g.Name, g.Version)
		}
		if got := n.Load(); got != 5 {
			t.Errorf("stale catalog: %d statements, want 5 (check + full load)", got)
		}
	})
}

// The cache holds one view for every viewer; visibility is applied on every
// read, so an admin's read of an off-shelf goods never leaks to customers.
func TestCacheVisibility(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, _ := newCached(t, db)
		id := createShirt(t, s, "VIS").ID
		customer, admin := Viewer{}, Viewer{Admin: true}
		mustView(t, s, customer, id)

		must.NoErr(t, db.Client.Goods.UpdateOneID(id).SetStatus(enums.GoodsOffShelf).AddVersion(1).Exec(ctx))
		s.changed(id)
		mustView(t, s, admin, id) // cached now, off shelf
		if g, err := s.Goods(ctx, customer, id); g != nil || err != nil {
			t.Errorf("customer sees off-shelf goods from the cache: %v, %v", g, err)
		}

		if g, err := s.Goods(ctx, admin, 1<<40); g != nil || err != nil {
			t.Errorf("unknown goods = %v, %v", g, err)
		}
	})
}

// A SKU disabled behind the cache's back (no version bump) is still caught by
// the TTL check: the catalog part is rebuilt, not just the stock.
func TestCacheRevalidationSeesSkuStatus(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s, clk := newCached(t, db)
		g := createShirt(t, s, "SKUST")
		must.NoErr(t, db.Client.Sku.Update().Where(sku.ID(g.SkuList(false)[0].ID)).SetStatus(enums.SkuDisabled).Exec(ctx))
		clk.step(DefaultStockTTL)
		if got := mustView(t, s, Viewer{}, g.ID); len(got.SkuList(false)) != 5 {
			t.Errorf("enabled SKUs after the TTL = %d, want 5", len(got.SkuList(false)))
		}
	})
}

// Version-guarded writes (seed 003, 7.3): two loads of versions 7 and 8 that
// finish in either order leave 8 in the cache, on a cold key (both slots
// pending in ristretto's buffer) and on a warm one.
func TestCacheNewerSnapshotWins(t *testing.T) {
	view := func(v int64) *Goods { return &Goods{ID: 1, Version: v, cat: &catalogPart{cost: 1000}} }
	for _, first := range []int64{7, 8} {
		for _, warm := range []bool{false, true} {
			c := newViewCache(DefaultConfig())
			if warm {
				c.publish(c.slotFor(1), &snapshot{view: view(6), seq: c.seq.Add(1), checked: c.now()})
				c.rc.Wait()
			}
			release := map[int64]chan struct{}{7: make(chan struct{}), 8: make(chan struct{})}
			var started sync.WaitGroup
			started.Add(2)
			done := make(chan struct{})
			for _, v := range []int64{7, 8} {
				go func() {
					sl := c.slotFor(1)
					sn := &snapshot{view: view(v), seq: c.seq.Add(1), checked: c.now()}
					started.Done()
					<-release[v]
					c.publish(sl, sn)
					done <- struct{}{}
				}()
			}
			started.Wait() // both have read before either writes
			close(release[first])
			<-done
			close(release[15-first])
			<-done
			c.rc.Wait()
			sl := c.lookup(1)
			if sl == nil || sl.snap.Load().view.Version != 8 {
				t.Errorf("first=%d warm=%v: cache holds %v, want version 8", first, warm, sl)
			}
			c.rc.Close()
		}
	}
}

// Unordered: many rounds of two racing loads, no forced order.
func TestCacheNewerSnapshotWinsRacing(t *testing.T) {
	view := func(v int64) *Goods { return &Goods{ID: 1, Version: v, cat: &catalogPart{cost: 1000}} }
	for round := range 200 {
		c := newViewCache(DefaultConfig())
		id := int64(round)
		var wg sync.WaitGroup
		for _, v := range []int64{8, 7} {
			wg.Go(func() {
				c.publish(c.slotFor(id), &snapshot{view: view(v), seq: c.seq.Add(1), checked: c.now()})
			})
		}
		wg.Wait()
		c.rc.Wait()
		if sl := c.lookup(id); sl == nil || sl.snap.Load().view.Version != 8 {
			t.Fatalf("round %d: cache holds %v, want version 8", round, sl)
		}
		c.rc.Close()
	}
}

// Two slots of one goods (an eviction raced a load): ristretto's ShouldUpdate
// keeps the slot with the newer snapshot.
func TestCacheSlotReplacementGuarded(t *testing.T) {
	c := newViewCache(DefaultConfig())
	defer c.rc.Close()
	newer := &slot{id: 1}
	newer.snap.Store(&snapshot{view: &Goods{Version: 8, cat: &catalogPart{}}, seq: 2})
	older := &slot{id: 1}
	older.snap.Store(&snapshot{view: &Goods{Version: 7, cat: &catalogPart{}}, seq: 3})
	c.rc.Set(1, newer, 100)
	c.rc.Wait()
	c.rc.Set(1, older, 100)
	c.rc.Wait()
	if got, _ := c.rc.Get(1); got != newer {
		t.Errorf("an older slot replaced a newer one")
	}
}

// The cache never holds more than MaxCost: a tiny bound evicts or rejects.
func TestCacheBoundedCost(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CacheMaxCost = 10_000
	c := newViewCache(cfg)
	defer c.rc.Close()
	for id := range int64(100) {
		c.publish(c.slotFor(id), &snapshot{view: &Goods{ID: id, Version: 1, cat: &catalogPart{cost: 1000}}, seq: c.seq.Add(1)})
	}
	c.rc.Wait()
	held := 0
	for id := range int64(100) {
		if c.lookup(id) != nil {
			held++
		}
	}
	if maxHeld := 10_000 / (1000 + slotOverhead); held > maxHeld {
		t.Errorf("cache holds %d entries of cost %d under MaxCost 10000", held, 1000+slotOverhead)
	}
	if c.rejected.Load()+c.evicted.Load()+c.dropped.Load() == 0 {
		t.Error("nothing was rejected, evicted or dropped")
	}
}

// Selectable allocates only its result list; the bitset work uses a pooled
// buffer and the answers point into the immutable view.
func TestSelectableAllocations(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s, _ := newCached(t, db)
		g := createShirt(t, s, "ALLOC")
		sel := []int64{g.Specs[0].Values[0].ID}
		if _, err := g.Selectable(sel); err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(200, func() { _, _ = g.Selectable(sel) }); n > 1 {
			t.Errorf("Selectable allocates %.0f times per call, want 1 (the result list)", n)
		}
	})
}

// Admins edit with the SKU versions the view shows, and every stock move bumps
// them: an admin read is checked against the database (one statement) and
// shows the current stock and versions at once; customers keep the cached view.
func TestCacheAdminReadsAreCurrent(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		s, _ := newCached(t, db)
		id := createShirt(t, s, "ADMIN").ID
		cached := mustView(t, s, Viewer{}, id)
		hot := cached.SkuList(false)[0]
		must.NoErr(t, db.Client.Sku.UpdateOneID(hot.ID).AddStock(-1).AddStockVersion(1).Exec(ctx))

		n.Store(0)
		g := mustView(t, s, Viewer{Admin: true}, id)
		if got := n.Load(); got != 1 {
			t.Errorf("admin read: %d statements, want 1", got)
		}
		if s := g.SkuList(false)[0]; s.Stock != hot.Stock-1 || s.StockVersion != hot.StockVersion+1 {
			t.Errorf("admin sees stock %d stock version %d, want %d and %d", s.Stock, s.StockVersion, hot.Stock-1, hot.StockVersion+1)
		}
		// The admin's check refreshed the cache for everyone.
		if g := mustView(t, s, Viewer{}, id); g.SkuList(false)[0].Stock != hot.Stock-1 {
			t.Errorf("customer after the admin's read: stock %d, want %d", g.SkuList(false)[0].Stock, hot.Stock-1)
		}
	})
}

// goodsList reads each goods' version with the page, so a cached view of an
// older version is never listed, even for an edit made through another
// instance; a warm page of unchanged goods is that statement and the
// listing's.
func TestCacheListChecksVersions(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		s, _ := newCached(t, db)
		a, b := createShirt(t, s, "LA"), createShirt(t, s, "LB")
		if _, err := s.List(ctx, Viewer{}, ListParams{First: 10}); err != nil {
			t.Fatal(err)
		}
		n.Store(0)
		if _, err := s.List(ctx, Viewer{}, ListParams{First: 10}); err != nil || n.Load() != 2 {
			t.Errorf("warm list: %d statements (err %v), want 2 (the listing, the page's goods rows)", n.Load(), err)
		}
		must.NoErr(t, db.Client.Goods.UpdateOneID(b.ID).SetName("改名").AddVersion(1).Exec(ctx)) // no changed(): another instance
		page, err := s.List(ctx, Viewer{}, ListParams{First: 10})
		if err != nil || len(page.Goods) != 2 {
			t.Fatalf("List = %v, %v", page, err)
		}
		if page.Goods[0].ID != a.ID || page.Goods[0].Name != a.Name || page.Goods[1].Name != "改名" {
			t.Errorf("listed %q, %q; want %q, 改名", page.Goods[0].Name, page.Goods[1].Name, a.Name)
		}
		if g := mustView(t, s, Viewer{}, b.ID); g.Name != "改名" {
			t.Errorf("product page after the list reloaded it: %q, want 改名", g.Name)
		}
	})
}

// A payment adds to sku.volume with a plain UPDATE that bumps no version
// (internal/payments/service.go): the TTL check still shows it, one statement as for
// stock, and an admin's read shows it at once.
func TestCacheRevalidationSeesVolume(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		s, clk := newCached(t, db)
		id := createShirt(t, s, "VOLUME").ID
		hot := mustView(t, s, Viewer{}, id).SkuList(false)[0]
		sold := func(qty int) {
			t.Helper()
			_, err := db.SQL.ExecContext(ctx, "UPDATE sku SET volume = volume + ? WHERE id = ?", qty, hot.ID)
			must.NoErr(t, err)
		}
		volume := func(g *Goods) int64 { return g.SkuList(false)[0].Volume }

		sold(3)
		if v := volume(mustView(t, s, Viewer{}, id)); v != 0 && v != 3 {
			t.Errorf("within the TTL volume = %d, want the cached 0 or the new 3", v)
		}
		clk.step(DefaultStockTTL)
		n.Store(0)
		if v := volume(mustView(t, s, Viewer{}, id)); v != 3 {
			t.Errorf("after the TTL volume = %d, want 3", v)
		}
		if got := n.Load(); got != 1 {
			t.Errorf("revalidation: %d statements, want 1", got)
		}
		sold(2)
		if v := volume(mustView(t, s, Viewer{Admin: true}, id)); v != 5 {
			t.Errorf("admin read volume = %d, want 5 at once", v)
		}
		if v := volume(mustView(t, s, Viewer{}, id)); v != 5 {
			t.Errorf("customer after the admin's read: volume = %d, want 5", v)
		}
	})
}
