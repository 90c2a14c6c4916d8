package checkout

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
)

// Group commit (issue 8). One hot SKU row takes one CAS at a time, and each
// order transaction holds the row lock from its CAS to COMMIT, so a flash sale
// tops out at one order per lock hold. Instead, single-SKU orders that arrive
// while a transaction on their SKU is in flight queue up, and the next
// transaction takes the whole queue (up to GroupMax): one lock hold, one
// UPDATE and one COMMIT for all of them (batch.go).
//
// There is no dispatcher goroutine: the request that finds its SKU idle runs
// at once (a lone request never waits for a batch), and the request that
// finishes a batch hands the queue that built up meanwhile to its first
// waiter, which runs it as the next batch on its own goroutine.

// ticket is one single-SKU order waiting for, or leading, a batch.
type ticket struct {
	order *Order
	line  *line
	claim *claim
	done  chan verdict // buffered: answering never blocks the leader
}

// verdict answers a waiting ticket: its outcome, or a batch to run.
type verdict struct {
	err  error
	lead []*ticket
}

// queue is the state of one SKU: a transaction in flight or not, and the
// tickets that arrived meanwhile, in arrival order.
type queue struct {
	busy    bool
	waiting []*ticket
}

type groups struct {
	mu   sync.Mutex
	skus map[int64]*queue // only SKUs with a transaction in flight
	// Transactions run through queues and the orders they carried.
	batches, orders atomic.Int64
}

// GroupStats returns how many transactions the group path ran and how many
// orders they carried (orders / batches is the mean batch size).
func (s *Service) GroupStats() (batches, orders int64) {
	return s.groups.batches.Load(), s.groups.orders.Load()
}

var errBatchAborted = errors.New("checkout: the batch transaction was aborted")

// placeGrouped places t's order through its SKU's queue and returns the
// order's own outcome.
func (s *Service) placeGrouped(ctx context.Context, t *ticket) error {
	g, id := &s.groups, t.line.ItemID
	t.done = make(chan verdict, 1)
	g.mu.Lock()
	q := g.skus[id]
	if q == nil {
		q = &queue{}
		g.skus[id] = q
	}
	if !q.busy {
		q.busy = true
		g.mu.Unlock()
		return s.lead(ctx, id, []*ticket{t})
	}
	q.waiting = append(q.waiting, t)
	g.mu.Unlock()
	var v verdict
	select {
	case v = <-t.done:
	case <-ctx.Done():
		g.mu.Lock()
		if i := slices.Index(q.waiting, t); i >= 0 {
			// Not taken into a batch yet: leave without a trace.
			q.waiting = slices.Delete(q.waiting, i, i+1)
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Unlock()
		// Already in a batch: its outcome (perhaps a committed order) is on
		// the way and must be reported, not guessed.
		v = <-t.done
	}
	if v.lead != nil {
		return s.lead(ctx, id, v.lead)
	}
	return v.err
}

// lead runs batch (batch[0] is the caller's own ticket), answers the others,
// then hands the queue that built up meanwhile to its first waiter.
func (s *Service) lead(ctx context.Context, id int64, batch []*ticket) (err error) {
	answered := false
	defer func() {
		if !answered { // a panic: nobody may wait forever
			for _, t := range batch[1:] {
				t.done <- verdict{err: errBatchAborted}
			}
		}
		s.handOver(id)
	}()
	errs := s.runBatch(ctx, batch)
	s.groups.batches.Add(1)
	s.groups.orders.Add(int64(len(batch)))
	for i, t := range batch[1:] {
		t.done <- verdict{err: errs[i+1]}
	}
	answered = true
	return errs[0]
}

func (s *Service) handOver(id int64) {
	g := &s.groups
	g.mu.Lock()
	defer g.mu.Unlock()
	q := g.skus[id]
	if len(q.waiting) == 0 {
		delete(g.skus, id)
		return
	}
	n := min(len(q.waiting), s.cfg.GroupMax)
	next := slices.Clone(q.waiting[:n])
	q.waiting = slices.Clone(q.waiting[n:])
	next[0].done <- verdict{lead: next}
}
