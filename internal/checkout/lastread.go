package checkout

import (
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"storefront/ent"
	"storefront/internal/inventory"
	"storefront/internal/vocab/enums"
)

// lastRead keeps what the group path last read of each SKU (on a server:
// serverBatcher), so that a batch on a SKU another batch sold from a
// moment ago need not read it again: on a hot SKU that read was one of the
// batch's two round trips.
//
// It is never trusted, only checked: what a batch decides from it (price,
// names, on sale, enough stock for every order) is verified in the batch's
// own transaction under the SKU's row lock (the writer's CAS), and a
// mismatch rolls the batch back and runs it again from a locked read. A
// refusal (no stock, not on sale) is never decided from it: the batch then
// reads the rows, so a restock or a price change is seen at once.
//
// Stock pools and their buyers' counters are kept the same way (a flash
// sale's batches each read the pool and the counters otherwise: two round
// trips a batch before any write). A buyer not kept is taken as holding
// nothing (a flash sale's buyers are mostly new), and the check under the
// lock (the batch's guard on pool_buyer) catches one past the limit; a
// buyer kept at the limit is refused from memory, which sends the batch to
// read (a refusal is never decided from memory), not round again.
type lastRead struct {
	rows   *lru.Cache[int64, skuRow]        // stock: as left by the batch that read it
	pools  *lru.Cache[int64, ent.StockPool] // stock, lock_stock: as left by the batch
	buyers *lru.Cache[inventory.PoolBuyer, int64]
	// maxAge bounds how long a SKU row is recalled after it was read: a
	// goods' freight template (shipto.go) is not among the terms the CAS
	// checks, so a template put on a goods whose SKU sells on without a
	// refusal is seen at the next read, at most maxAge later.
	maxAge time.Duration
}

// lastReadAge is lastRead.maxAge: a hot SKU is read once a second instead
// of never, against a batch every few milliseconds.
const lastReadAge = time.Second

// lastReadSize bounds the memory: a sale is on a few SKUs at a time.
const lastReadSize = 4096

func newLastRead() *lastRead {
	c, err := lru.New[int64, skuRow](lastReadSize)
	if err != nil {
		panic(err) // only for a size ≤ 0
	}
	p, err := lru.New[int64, ent.StockPool](lastReadSize)
	if err != nil {
		panic(err)
	}
	b, err := lru.New[inventory.PoolBuyer, int64](lastBuyersSize)
	if err != nil {
		panic(err)
	}
	return &lastRead{rows: c, pools: p, buyers: b, maxAge: lastReadAge}
}

// lastBuyersSize bounds the buyers kept: a flash sale's buyers of the last
// few seconds.
const lastBuyersSize = 1 << 16

// getPools returns the pools of batch as kept, with the buyers kept, or ok
// false when one of the pools is not known.
func (l *lastRead) getPools(batch []*ticket) (poolState, bool) {
	ps := poolState{pools: map[int64]*ent.StockPool{}, units: map[inventory.PoolBuyer]int64{}}
	for _, t := range batch {
		if t.pool == 0 {
			continue
		}
		if _, seen := ps.pools[t.pool]; !seen {
			p, ok := l.pools.Get(t.pool)
			if !ok {
				return poolState{}, false
			}
			ps.pools[t.pool] = &p
		}
		if n, ok := l.buyers.Get(t.buyer()); ok {
			ps.units[t.buyer()] = n
		}
	}
	return ps, true
}

// putPools keeps pools and buyers after their batch committed, with what
// the batch's orders won took of each.
func (l *lastRead) putPools(ps poolState, batch []*ticket, won []int) {
	taken := map[int64]int64{}
	locked := map[int64]bool{} // a lock-mode pool's units are locked, not gone
	held := map[inventory.PoolBuyer]int64{}
	// Every buyer of the batch is kept, refused ones too: a buyer at the
	// limit is then refused from memory (and read), instead of passing
	// memory and failing the batch's check under the lock every time.
	for _, t := range batch {
		if t.pool != 0 {
			held[t.buyer()] = ps.units[t.buyer()]
		}
	}
	for _, i := range won {
		if t := batch[i]; t.pool != 0 {
			held[t.buyer()] += t.line.Quantity
			taken[t.pool] += t.line.Quantity
			locked[t.pool] = t.line.StockMode == enums.LockAtOrder
		}
	}
	for b, n := range held {
		l.buyers.Add(b, n)
	}
	for id, p := range ps.pools {
		c := *p
		if locked[id] {
			c.LockStock += taken[id]
		} else {
			c.Stock -= taken[id]
		}
		l.pools.Add(id, c)
	}
}

// dropPools forgets the pools of batch and its buyers' counters: the batch
// failed, so what was kept of them may be what failed it.
func (l *lastRead) dropPools(batch []*ticket) {
	for _, t := range batch {
		if t.pool != 0 {
			l.pools.Remove(t.pool)
			l.buyers.Remove(t.buyer())
		}
	}
}

// get returns the rows of ids and their stock, or ok false when one of them
// is not known.
func (l *lastRead) get(ids []int64) (rows []*skuRow, stock map[int64]int64, ok bool) {
	rows = make([]*skuRow, 0, len(ids))
	stock = make(map[int64]int64, len(ids))
	for _, id := range ids {
		r, ok := l.rows.Get(id)
		if !ok || time.Since(r.readAt) > l.maxAge {
			return nil, nil, false
		}
		rows = append(rows, &r)
		stock[id] = r.available()
	}
	return rows, stock, true
}

// put remembers rows after their batch committed, with the available stock
// it left.
func (l *lastRead) put(rows []*skuRow, left map[int64]int64) {
	for _, r := range rows {
		c := *r
		if taken := r.available() - left[r.id]; r.mode == enums.LockAtOrder {
			c.locked += taken
		} else {
			c.stock -= taken
		}
		l.rows.Add(r.id, c)
	}
}

// drop forgets ids: their batch failed, so what was read of them may be
// what failed it.
func (l *lastRead) drop(ids []int64) {
	for _, id := range ids {
		l.rows.Remove(id)
	}
}
