package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"storefront/internal/inventory"
)

// Group commit. One hot SKU row takes one CAS at a time, and each
// order transaction holds the row lock from its CAS to COMMIT, so a flash sale
// tops out at one order per lock hold. Instead, single-SKU orders that arrive
// while the group path's transactions are busy queue up, and the next
// transaction takes the whole queue (up to GroupMax): one read, one
// multi-row insert per table, one lock, one UPDATE per SKU and one COMMIT for
// all of them (batch.go), and no statement of its own for any single order.
//
// One queue serves every SKU: a sale on a T-shirt hits all its sizes and
// colours at once, and per-SKU queues then carry a few orders each (16 SKUs
// under 64 buyers made batches of 1.7 and 32 transactions fighting over 2
// cores). At most GroupInFlight batches run at once in each lane, and at
// most pipelineDepth of them hold orders of the same source.
//
// Two lanes: orders from stock pools and orders from main stock batch
// apart, each lane with its own batches in flight. A flash sale's pool is
// stock kept apart so that the sale cannot starve the shop; in one lane its
// buyers' batches filled every slot in flight and an ordinary order of any
// SKU waited a whole batch cycle behind them (docs/benchmarks.md).
//
// Each batch runs on its own goroutine, started by the request that finds
// room (a lone request never waits for a batch; behind a batch in flight, the
// one that makes the queue as long as that batch) or by the batch that ends
// and hands over the queue that built up meanwhile (startBatches). Every
// buyer waits for its own answer or its own deadline, whichever comes first;
// a batch is never cut short by one buyer's deadline (batchDeadline).

// ticket is one single-SKU order on the group path.
type ticket struct {
	in   PlaceInput
	hash string        // requestHash(in)
	key  string        // the idempotency key, or the fallback key
	keep time.Duration // how long a finished key replays its order
	item int64         // the SKU, named by id in every item
	pool int64         // the stock pool every item names; 0: main stock

	// Filled in by the batch transaction.
	order *Order
	line  *line

	done chan verdict // buffered: answering never blocks the batch
	// deadline is the request's (zero: none); see batchDeadline.
	deadline time.Time
	// span is the request's span (tracing on; else invalid): the batch
	// links to it and the order's event keeps it.
	span trace.SpanContext
}

// verdict is a ticket's outcome.
type verdict struct {
	err    error
	replay string // the order number a finished key replays
	// alone: the batch could not decide this order (a key to take over, a
	// key claimed concurrently elsewhere): place it on the plain path.
	alone bool
}

// pipelineDepth is how many batches holding orders of one SKU may be in
// flight at once (on a server): one holding the row lock, the next reading and
// writing what needs no lock meanwhile. More would only queue on the row
// lock, in smaller batches.
const pipelineDepth = 2

type groups struct {
	mu        sync.Mutex
	waiting   []*ticket      // arrival order, all SKUs
	running   [lanes]int     // batch transactions in flight, per lane
	last      [lanes]int     // orders in the lane's batch started last
	perSource map[source]int // in-flight batches holding orders of the source
	// rest: per pool, when its next batch may start (poolRest); wake
	// starts the batches of a pool whose rest ends while its orders wait.
	rest map[int64]time.Time
	wake *time.Timer
	// mains counts the main lane's batches started; shop is its value
	// when each pool's batch in flight started.
	mains int64
	shop  map[int64]int64
	// (user, key) of every order on the group path: a duplicate arriving
	// while the first runs is IDEMPOTENCY_IN_PROGRESS at once, as the plain
	// path's claim makes it.
	inflight map[[2]string]bool
	// Transactions run through the queue and the orders they carried.
	batches, orders atomic.Int64
}

// GroupStats returns how many transactions the group path ran and how many
// orders they carried (orders / batches is the mean batch size). A lone
// order placed on the plain path (placeLone) counts as a batch of one.
func (s *Service) GroupStats() (batches, orders int64) {
	return s.groups.batches.Load(), s.groups.orders.Load()
}

var errBatchAborted = errors.New("checkout: the batch transaction was aborted")

// groupable reports whether in goes through the group path: it must name
// one SKU, by id (a spec selection needs a read to find its SKU first), and
// one source of it (main stock, or one stock pool).
func (s *Service) groupable(in PlaceInput) (source, bool) {
	if !s.cfg.GroupCommit || in.AddressID != nil {
		// An order with an address is priced with its shipping
		// (shipto.go), which a batch does not read.
		return source{}, false
	}
	var src source
	for i, it := range in.Items {
		var pool int64
		if it.PoolID != nil {
			pool = *it.PoolID
		}
		if it.ItemID == nil || (i > 0 && (*it.ItemID != src.item || pool != src.pool)) {
			return source{}, false
		}
		src = source{*it.ItemID, pool}
	}
	return src, true
}

// placeGrouped places t's order through the group path's queue.
func (s *Service) placeGrouped(ctx context.Context, t *ticket) (*Order, error) {
	g := &s.groups
	ref := [2]string{t.in.UserID, t.key}
	t.done = make(chan verdict, 1)
	t.deadline, _ = ctx.Deadline()
	g.mu.Lock()
	if g.inflight[ref] {
		g.mu.Unlock()
		return nil, ErrIdempotencyInProgress
	}
	g.inflight[ref] = true
	leave := func() {
		g.mu.Lock()
		delete(g.inflight, ref)
		g.mu.Unlock()
	}
	// Nothing in flight leaves the writer free (a batch releases it before
	// it hands over), so TryLock takes it here, before an order arriving
	// next can start a batch that would make this one wait past its
	// deadline for the writer.
	if s.loneOnPlain && g.running == [lanes]int{} && len(g.waiting) == 0 && g.hasRoom(t.source(), time.Now()) {
		if release, ok := s.batcher.lone(t.lane()); ok {
			lone := []*ticket{t}
			g.start(lone)
			g.mu.Unlock()
			defer leave()
			return s.placeLone(ctx, t, lone, release)
		}
	}
	g.waiting = append(g.waiting, t)
	s.startBatches()
	g.mu.Unlock()
	var v verdict
	select {
	case v = <-t.done:
		leave()
	case <-ctx.Done():
		g.mu.Lock()
		if i := slices.Index(g.waiting, t); i >= 0 {
			// Not taken into a batch yet: leave without a trace.
			g.waiting = slices.Delete(g.waiting, i, i+1)
			delete(g.inflight, ref)
			g.mu.Unlock()
			return nil, ctx.Err()
		}
		g.mu.Unlock()
		// In a batch that has not answered: the order may yet commit, as
		// after any answer lost on the way. The key stays in flight here
		// until the batch answers, so a retry meanwhile is IN_PROGRESS and
		// one after it replays.
		go func() { <-t.done; leave() }()
		return nil, fmt.Errorf("placing the order: its outcome is not known yet: %w", ctx.Err())
	}
	switch {
	case v.alone:
		return s.placePlain(ctx, t)
	case v.replay != "":
		return s.replay(ctx, v.replay)
	case v.err != nil:
		return nil, v.err
	}
	return t.order, nil
}

// placeLone places t, which found the group path idle, on the plain path on
// its caller's goroutine, counted in flight like a batch of one: orders that
// arrive meanwhile queue behind it and go as the next batch. It holds
// SQLite's one writer, taken by its caller, as a batch does, and releases
// it before handing over.
//
// Why on SQLite only: there a batch of one saves no round trip (the
// database is in process) and pays a hand-off to the batch's goroutine and
// back, which made one buyer slower than on the plain path
// (docs/benchmarks.md). On a server a batch of one takes two round trips
// where the plain path takes about ten.
func (s *Service) placeLone(ctx context.Context, t *ticket, lone []*ticket, release func()) (*Order, error) {
	began := time.Now()
	defer func() { s.handOver(lone, time.Since(began)) }()
	defer release()
	s.groups.batches.Add(1)
	s.groups.orders.Add(1)
	return s.placePlain(ctx, t)
}

// run places batch (on its own goroutine), answers every ticket of it and
// hands the queue that built up meanwhile to the next batches.
func (s *Service) run(batch []*ticket) {
	answered := false
	var held time.Duration
	defer func() {
		if p := recover(); p != nil {
			slog.Error("group-commit batch panicked", "panic", p, "stack", string(debug.Stack()))
		}
		if !answered { // nobody may wait forever
			for _, t := range batch {
				t.done <- verdict{err: errBatchAborted}
			}
		}
		s.handOver(batch, held)
	}()
	out, held := s.runBatch(batch)
	s.groups.batches.Add(1)
	s.groups.orders.Add(int64(len(batch)))
	for i, t := range batch {
		t.done <- out[i]
	}
	answered = true
	// Let the buyers just answered run before the queue is handed over
	// (the deferred handOver): a client that orders again, or a handler
	// that finishes its response and reads the next request, joins the
	// next batch instead of the one after it. Batches on the hot SKU grew
	// from ~19 to ~23 orders at 64 buyers, and the database's CPU per
	// order fell with them (docs/benchmarks.md). A lone order's batch
	// finds nobody to yield to.
	runtime.Gosched()
}

// handOver starts the next batches from the waiting tickets while there is
// room. ended is the batch that just ended (nil: none), after holding what
// its lane holds for ran.
func (s *Service) handOver(ended []*ticket, ran time.Duration) {
	g := &s.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	if ended != nil {
		g.running[ended[0].lane()]--
		for _, src := range sourcesOf(ended) {
			if g.perSource[src]--; g.perSource[src] == 0 {
				delete(g.perSource, src)
			}
			if src.pool != 0 {
				// Only beside the shop's orders: alone, a sale sells at
				// full speed.
				if g.running[0] > 0 || g.mains != g.shop[src.pool] {
					g.rest[src.pool] = time.Now().Add(poolRest(ran))
				}
				delete(g.shop, src.pool)
			}
		}
	}
	s.startBatches()
}

// poolRest is how long a pool rests after a batch of it that ran for ran
// while the shop's ordinary orders were being placed: twice as long, so
// that beside them a flash sale holds its lane (on SQLite the one writer,
// on any database its share of the cores) at most a third of the time.
// Its buyers wait meanwhile, and the next batch takes what queued up, up
// to PoolBatchMax. Without it the pool lane was never idle, and on a small
// machine the ordinary orders beside a busy sale waited behind it
// (docs/benchmarks.md). At most maxPoolRest: a batch slowed by a stalled
// database must not make every buyer queued behind it time out.
func poolRest(ran time.Duration) time.Duration { return min(2*ran, maxPoolRest) }

const maxPoolRest = time.Second

// startBatches starts batches from the waiting tickets while there is room
// (g.mu held). With nothing in flight the queue goes at once, however short:
// a lone order never waits. Behind a batch in flight, the next one starts
// only once it would carry as many orders as the last one started, or when
// a batch ends. A smaller batch started sooner would pay a whole
// transaction (a round trip, a commit) for fewer orders and then wait on the
// same row lock; under 64 buyers over HTTP that halved the batches and
// raised the CPU per order by a fifth (docs/benchmarks.md).
func (s *Service) startBatches() {
	g := &s.groups
	now := time.Now()
	for lane := range lanes {
		max := s.laneMax(lane)
		for g.running[lane] < s.cfg.GroupInFlight {
			n := g.ready(lane, max, now)
			if n == 0 || (g.running[lane] > 0 && n < g.last[lane]) { // last ≤ max, as n is
				break
			}
			next := g.take(lane, max, now)
			g.start(next)
			go s.run(next)
		}
	}
	s.wakeAfterRest(now)
}

// laneMax is the most orders a batch of lane takes.
func (s *Service) laneMax(lane int) int {
	if lane == poolLane {
		return min(s.cfg.PoolBatchMax, s.cfg.GroupMax)
	}
	return s.cfg.GroupMax
}

// wakeAfterRest arms the timer that starts the batches of the pools whose
// orders wait for their rest to end (g.mu held).
func (s *Service) wakeAfterRest(now time.Time) {
	g := &s.groups
	var at time.Time
	for _, t := range g.waiting {
		if r := g.rest[t.pool]; t.pool != 0 && r.After(now) && (at.IsZero() || r.Before(at)) {
			at = r
		}
	}
	if at.IsZero() {
		return
	}
	if g.wake == nil {
		g.wake = time.AfterFunc(at.Sub(now), func() { s.handOver(nil, 0) })
		return
	}
	g.wake.Reset(at.Sub(now))
}

// lanes: main stock (0) and stock pools (poolLane).
const (
	lanes    = 2
	poolLane = 1
)

func (t *ticket) lane() int { return min(int(t.pool), poolLane) }

// ready counts the waiting tickets take would return, up to max.
func (g *groups) ready(lane, max int, now time.Time) int {
	n := 0
	for _, t := range g.waiting {
		if n == max {
			break
		}
		if t.lane() == lane && g.hasRoom(t.source(), now) {
			n++
		}
	}
	return n
}

// take removes from the queue, in arrival order, up to max tickets of lane
// whose source has room in its pipeline.
func (g *groups) take(lane, max int, now time.Time) []*ticket {
	var next []*ticket
	rest := g.waiting[:0:0]
	for _, t := range g.waiting {
		if len(next) < max && t.lane() == lane && g.hasRoom(t.source(), now) {
			next = append(next, t)
		} else {
			rest = append(rest, t)
		}
	}
	g.waiting = rest
	return next
}

// hasRoom reports whether a batch holding orders of src may start: fewer
// than pipelineDepth of them are in flight, or none for a pool. A pool's
// batches do not pipeline: one deciding while another holds the pool's
// row decided from counters the other was changing, so a buyer ordering
// with several keys at once failed the check under the lock in both the
// batch and its rerun, and the whole batch answered UNAVAILABLE (30 orders
// of TestFlashSaleFromPool on MariaDB once its rerun stopped locking the
// pool first). Nor does one start while its pool rests (poolRest).
func (g *groups) hasRoom(src source, now time.Time) bool {
	if src.pool != 0 {
		return g.perSource[src] == 0 && !now.Before(g.rest[src.pool])
	}
	return g.perSource[src] < pipelineDepth
}

// start counts batch (of one lane) in flight (g.mu held).
func (g *groups) start(batch []*ticket) {
	lane := batch[0].lane()
	g.running[lane]++
	g.last[lane] = len(batch)
	if lane == 0 {
		g.mains++
	}
	for _, src := range sourcesOf(batch) {
		g.perSource[src]++
		if src.pool != 0 {
			delete(g.rest, src.pool) // over, or the pool's first batch
			g.shop[src.pool] = g.mains
		}
	}
}

// skusOf returns the distinct SKUs of batch in ascending order: the order in
// which every stock-moving transaction locks them.
func skusOf(batch []*ticket) []int64 {
	ids := make([]int64, 0, 1)
	for _, t := range batch {
		ids = append(ids, t.item)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// source is where an order's units come from: a SKU's main stock (pool 0)
// or one of its stock pools. Each is its own row and row lock, so a flash
// sale's batches and the SKU's ordinary ones pipeline apart.
type source struct{ item, pool int64 }

func (t *ticket) source() source { return source{t.item, t.pool} }

// buyer is the ticket's buyer's counter of its pool (pool orders only).
func (t *ticket) buyer() inventory.PoolBuyer {
	return inventory.PoolBuyer{PoolID: t.pool, Buyer: t.in.UserID}
}

// sourcesOf returns the distinct sources of batch: main stock ascending by
// SKU, then pools ascending by pool id, the order in which every
// stock-moving transaction locks their rows.
func sourcesOf(batch []*ticket) []source {
	srcs := make([]source, 0, 1)
	for _, t := range batch {
		srcs = append(srcs, t.source())
	}
	slices.SortFunc(srcs, func(a, b source) int {
		return cmp.Or(cmp.Compare(min(a.pool, 1), min(b.pool, 1)), cmp.Compare(a.pool, b.pool), cmp.Compare(a.item, b.item))
	})
	return slices.Compact(srcs)
}
