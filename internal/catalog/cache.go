package catalog

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
)

// viewCache keeps product views between requests. It is a best-effort read
// cache, never a source of truth: ristretto may drop or evict any entry, and
// checkout reads stock from the database, never from here.
//
// Every entry is a slot per goods holding an atomic pointer to its newest
// snapshot. Writers go through slot.offer, a compare-and-swap that keeps the
// newer of two snapshots (seed 003, 7.3: version-guarded writes, not
// delete-then-hope), so a slow load of version 7 can never overwrite a load of
// version 8 that finished first.
type viewCache struct {
	rc  *ristretto.Cache[int64, *slot]
	ttl time.Duration
	now func() time.Time // time.Now; tests step it past the TTL

	// seq orders loads: each takes a number before its first query, so a
	// higher number read the database no earlier.
	seq atomic.Uint64
	// floors[id%len] is the seq of the last edit made through this instance
	// to a goods hashing there; a snapshot read before it is not served.
	// Sharing a floor between goods only causes an extra reload, and keeps the
	// memory fixed however many goods are edited.
	floors [4096]atomic.Uint64
	// lastEdit is the seq of the last edit of any goods through this
	// instance: a finished listing read before it may be out of date.
	lastEdit atomic.Uint64
	// pending holds slots created by a load but not (yet) visible through
	// ristretto, whose Set is asynchronous: without it two concurrent first
	// loads would create two slots, and ristretto would keep the first
	// applied, not the newer.
	stripes [64]slotStripe

	hits, misses, revalidations, reloads atomic.Uint64
	rejected, dropped, evicted           atomic.Uint64
}

type slotStripe struct {
	mu      sync.Mutex
	pending map[int64]*slot
}

type slot struct {
	id   int64
	snap atomic.Pointer[snapshot]
	// load lets one request per goods reload it while the others wait for
	// its result instead of all querying the database at once.
	load    sync.Mutex
	pending atomic.Bool
	inCache atomic.Bool
	cost    atomic.Int64
}

// snapshot is an immutable view plus when and in which order it was read.
type snapshot struct {
	view    *Goods
	seq     uint64
	checked time.Time // taken before the queries: the data is at least this fresh
}

// newerThan orders snapshots by the goods' version first: a later load may
// have started earlier and still read the newer catalog.
func (a *snapshot) newerThan(b *snapshot) bool {
	if a.view.Version != b.view.Version {
		return a.view.Version > b.view.Version
	}
	return a.seq > b.seq
}

// offer installs s unless the slot already holds a snapshot at least as new.
func (sl *slot) offer(s *snapshot) bool {
	for {
		cur := sl.snap.Load()
		if cur != nil && !s.newerThan(cur) {
			return false
		}
		if sl.snap.CompareAndSwap(cur, s) {
			return true
		}
	}
}

// slotOverhead is the bookkeeping per entry beyond the view itself (the slot,
// the snapshot, ristretto's item): IgnoreInternalCost is set so that every
// byte is counted here, in one place.
const slotOverhead = 256

func newViewCache(cfg Config) *viewCache {
	c := &viewCache{ttl: cfg.StockTTL, now: time.Now}
	for i := range c.stripes {
		c.stripes[i].pending = map[int64]*slot{}
	}
	rc, err := ristretto.NewCache(&ristretto.Config[int64, *slot]{
		// ≈10× the entries that fit, assuming ≈8 KiB per goods (a 12-SKU view).
		NumCounters:        max(cfg.CacheMaxCost/(8<<10)*10, 1000),
		MaxCost:            cfg.CacheMaxCost,
		BufferItems:        64,
		IgnoreInternalCost: true,
		// A slot replaces another slot of the same goods (after an eviction
		// raced a load) only with a newer snapshot.
		ShouldUpdate: func(cur, prev *slot) bool {
			if cur == prev {
				return true
			}
			a, b := cur.snap.Load(), prev.snap.Load()
			return b == nil || (a != nil && a.newerThan(b))
		},
		OnReject: func(it *ristretto.Item[*slot]) {
			c.rejected.Add(1)
			c.forget(it.Value)
		},
		OnEvict: func(it *ristretto.Item[*slot]) {
			c.evicted.Add(1)
			c.forget(it.Value)
		},
	})
	if err != nil {
		// Only a zero NumCounters, MaxCost or BufferItems fails, and
		// withDefaults rules those out.
		panic("catalog: ristretto: " + err.Error())
	}
	c.rc = rc
	return c
}

// lookup is the hot path: one ristretto Get and no lock of ours.
func (c *viewCache) lookup(id int64) *slot {
	sl, ok := c.rc.Get(id)
	if !ok {
		return nil
	}
	if sl.pending.Load() {
		c.unpend(sl) // ristretto has applied the Set: the stripe map may let go
	}
	return sl
}

// peek returns the goods' slot from ristretto or, while ristretto has not
// applied its Set yet, from the pending map; nil when neither has one.
func (c *viewCache) peek(id int64) *slot {
	if sl := c.lookup(id); sl != nil {
		return sl
	}
	st := &c.stripes[uint64(id)%uint64(len(c.stripes))]
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.pending[id]
}

// slotFor returns the goods' slot, creating a pending one if ristretto has none.
func (c *viewCache) slotFor(id int64) *slot {
	if sl := c.lookup(id); sl != nil {
		return sl
	}
	st := &c.stripes[uint64(id)%uint64(len(c.stripes))]
	st.mu.Lock()
	defer st.mu.Unlock()
	if sl := st.pending[id]; sl != nil {
		return sl
	}
	sl := &slot{id: id}
	sl.pending.Store(true)
	st.pending[id] = sl
	return sl
}

func (c *viewCache) unpend(sl *slot) {
	st := &c.stripes[uint64(sl.id)%uint64(len(c.stripes))]
	st.mu.Lock()
	if st.pending[sl.id] == sl {
		delete(st.pending, sl.id)
	}
	sl.pending.Store(false)
	st.mu.Unlock()
}

// forget drops a slot ristretto has rejected or evicted; a request still
// holding it may publish into it again, which re-adds it.
func (c *viewCache) forget(sl *slot) {
	if sl == nil {
		return
	}
	sl.inCache.Store(false)
	c.unpend(sl)
}

// publish offers s to the slot and makes sure ristretto knows the slot with
// its current cost. A dropped Set only means a later miss.
func (c *viewCache) publish(sl *slot, s *snapshot) {
	if !sl.offer(s) {
		return
	}
	cost := s.view.cat.cost + slotOverhead
	if sl.inCache.Load() && sl.cost.Load() == cost {
		return
	}
	sl.cost.Store(cost)
	if c.rc.Set(sl.id, sl, cost) {
		sl.inCache.Store(true)
		return
	}
	c.dropped.Add(1)
	if !sl.inCache.Load() {
		c.unpend(sl)
	}
}

// abandon forgets a pending slot whose load failed before publishing anything.
func (c *viewCache) abandon(sl *slot) {
	if sl.snap.Load() == nil && !sl.inCache.Load() {
		c.unpend(sl)
	}
}

func (c *viewCache) floor(id int64) *atomic.Uint64 {
	return &c.floors[uint64(id)%uint64(len(c.floors))]
}

// fresh says whether sn may be served as is: read after the last edit of the
// goods through this instance, and younger than maxAge.
func (c *viewCache) fresh(id int64, sn *snapshot, maxAge time.Duration) bool {
	return sn != nil && sn.seq > c.floor(id).Load() && c.now().Sub(sn.checked) < maxAge
}

// maxAge is how stale a view a viewer may get: customers the stock TTL;
// admins nothing, because they edit with the SKU versions the view shows
// (every stock move bumps them) and would otherwise hit VERSION_CONFLICT
// until the TTL passed. Their reads cost one freshness query.
func (c *viewCache) maxAge(v Viewer) time.Duration {
	if v.Admin {
		return 0
	}
	return c.ttl
}

// edited raises the goods' floor past every load started so far.
func (c *viewCache) edited(id int64) {
	n := c.seq.Add(1)
	for cur := c.lastEdit.Load(); cur < n && !c.lastEdit.CompareAndSwap(cur, n); cur = c.lastEdit.Load() {
	}
	f := c.floor(id)
	for {
		cur := f.Load()
		if cur >= n || f.CompareAndSwap(cur, n) {
			return
		}
	}
}

// CacheStats counts what the product-view cache did since the start.
type CacheStats struct {
	Hits          uint64 // served from the cache
	Misses        uint64 // not cached: full load
	Revalidations uint64 // stock TTL passed: one query confirmed the catalog part
	Reloads       uint64 // cached but edited: full load
	Rejected      uint64 // ristretto's admission policy refused a new entry
	Dropped       uint64 // ristretto's write buffer was full
	Evicted       uint64 // removed to stay under the max cost
}

// CacheStats returns the product-view cache's counters (for /metrics).
func (s *Service) CacheStats() CacheStats {
	c := s.cache
	return CacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Revalidations: c.revalidations.Load(),
		Reloads: c.reloads.Load(), Rejected: c.rejected.Load(), Dropped: c.dropped.Load(), Evicted: c.evicted.Load(),
	}
}

// Close stops the cache's background goroutines; call it on shutdown.
func (s *Service) Close() { s.cache.rc.Close() }
