package checkout

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Group commit (issue 8). One hot SKU row takes one CAS at a time, and each
// order transaction holds the row lock from its CAS to COMMIT, so a flash sale
// tops out at one order per lock hold. Instead, single-SKU orders that arrive
// while a transaction on their SKU is in flight queue up, and the next
// transaction takes the whole queue (up to GroupMax): one SKU read, one
// multi-row insert per table, one lock, one UPDATE and one COMMIT for all of
// them (batch.go), and no statement of its own for any single order.
//
// There is no dispatcher goroutine: the request that finds its SKU idle runs
// at once as a batch of one (a lone request never waits for a batch), and the
// request that finishes a batch hands the queue that built up meanwhile to its
// first waiter, which runs it as the next batch on its own goroutine.

// ticket is one single-SKU order on the group path.
type ticket struct {
	in   PlaceInput
	hash string        // requestHash(in)
	key  string        // the idempotency key, or the fallback key
	keep time.Duration // how long a finished key replays its order
	item int64         // the SKU, named by id in every item

	// Filled in by the batch transaction.
	order *Order
	line  *line

	done chan verdict // buffered: answering never blocks the leader
	// deadline is the request's (zero: none); see batchDeadline.
	deadline time.Time
}

// verdict is a ticket's outcome, or a batch for its goroutine to run.
type verdict struct {
	err    error
	replay string // the order number a finished key replays
	// alone: the batch could not decide this order (a key to take over, a
	// key claimed concurrently elsewhere): place it on the plain path.
	alone bool
	lead  []*ticket
}

// queue is the state of one SKU: how many batch transactions are in flight,
// and the tickets that arrived meanwhile, in arrival order.
type queue struct {
	running int
	waiting []*ticket
}

// pipelineDepth is how many batches of one SKU may be in flight at once
// (MySQL): one holding the row lock, the next reading and writing what needs
// no lock meanwhile. More would only queue on the row lock, in smaller
// batches.
const pipelineDepth = 2

type groups struct {
	mu   sync.Mutex
	skus map[int64]*queue // only SKUs with a transaction in flight
	// (user, key) of every order on the group path: a duplicate arriving
	// while the first runs is IDEMPOTENCY_IN_PROGRESS at once, as the plain
	// path's claim makes it.
	inflight map[[2]string]bool
	// Transactions run through queues and the orders they carried.
	batches, orders atomic.Int64
}

// GroupStats returns how many transactions the group path ran and how many
// orders they carried (orders / batches is the mean batch size).
func (s *Service) GroupStats() (batches, orders int64) {
	return s.groups.batches.Load(), s.groups.orders.Load()
}

var errBatchAborted = errors.New("checkout: the batch transaction was aborted")

// groupable reports whether in goes through the group path: it must name
// one SKU, by id (a spec selection needs a read to find its SKU first).
func (s *Service) groupable(in PlaceInput) (int64, bool) {
	if !s.cfg.GroupCommit {
		return 0, false
	}
	var id int64
	for i, it := range in.Items {
		if it.ItemID == nil || (i > 0 && *it.ItemID != id) {
			return 0, false
		}
		id = *it.ItemID
	}
	return id, true
}

// placeGrouped places t's order through its SKU's queue.
func (s *Service) placeGrouped(ctx context.Context, t *ticket) (*Order, error) {
	g, id := &s.groups, t.item
	ref := [2]string{t.in.UserID, t.key}
	t.done = make(chan verdict, 1)
	t.deadline, _ = ctx.Deadline()
	g.mu.Lock()
	if g.inflight[ref] {
		g.mu.Unlock()
		return nil, ErrIdempotencyInProgress
	}
	g.inflight[ref] = true
	defer func() {
		g.mu.Lock()
		delete(g.inflight, ref)
		g.mu.Unlock()
	}()
	q := g.skus[id]
	if q == nil {
		q = &queue{}
		g.skus[id] = q
	}
	var v verdict
	if q.running == 0 {
		q.running = 1
		g.mu.Unlock()
		v = s.lead(ctx, id, []*ticket{t})
	} else {
		q.waiting = append(q.waiting, t)
		g.mu.Unlock()
		select {
		case v = <-t.done:
		case <-ctx.Done():
			g.mu.Lock()
			if i := slices.Index(q.waiting, t); i >= 0 {
				// Not taken into a batch yet: leave without a trace.
				q.waiting = slices.Delete(q.waiting, i, i+1)
				g.mu.Unlock()
				return nil, ctx.Err()
			}
			g.mu.Unlock()
			// Already in a batch: its outcome (perhaps a committed order)
			// is on the way and must be reported, not guessed.
			v = <-t.done
		}
		if v.lead != nil {
			v = s.lead(ctx, id, v.lead)
		}
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

// lead runs batch (batch[0] is the caller's own ticket), answers the others,
// hands the queue that built up meanwhile to its first waiter, and returns
// the caller's own verdict.
func (s *Service) lead(ctx context.Context, id int64, batch []*ticket) verdict {
	answered := false
	defer func() {
		if !answered { // a panic: nobody may wait forever
			for _, t := range batch[1:] {
				t.done <- verdict{err: errBatchAborted}
			}
		}
		s.handOver(id, true)
	}()
	out := s.runBatch(ctx, batch, func() { s.handOver(id, false) })
	s.groups.batches.Add(1)
	s.groups.orders.Add(int64(len(batch)))
	for i, t := range batch[1:] {
		t.done <- out[i+1]
	}
	answered = true
	return out[0]
}

// handOver starts the next batch of the SKU from its waiting tickets, if any
// wait and the pipeline has room. A batch calls it once when it ends (done)
// and, on MySQL, also as soon as it has decided (see batchTx).
func (s *Service) handOver(id int64, done bool) {
	g := &s.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.skus[id]
	if done {
		q.running--
	}
	if len(q.waiting) == 0 || q.running >= pipelineDepth {
		if q.running == 0 {
			delete(g.skus, id)
		}
		return
	}
	n := min(len(q.waiting), s.cfg.GroupMax)
	next := slices.Clone(q.waiting[:n])
	q.waiting = slices.Clone(q.waiting[n:])
	q.running++
	next[0].done <- verdict{lead: next}
}
