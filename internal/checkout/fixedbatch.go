package checkout

import (
	"context"
	"fmt"
	"math"
	"time"
)

// PlaceBatch places ins on the group path as one batch of exactly len(ins)
// orders, on the caller's goroutine, and answers each as Place would. It is
// for counting the instructions of an order (bench/count): a batch's size
// set by arrival times would make the count depend on the machine's speed.
// Each input must be groupable, of one lane, keyed, at most GroupMax of
// them, and none in flight through Place meanwhile.
//
// A server's batches recall the rows they read however long ago that was:
// lastRead's age is wall time, and counted under callgrind a batch takes
// half a second, so the count would depend on the machine's speed again.
// At full speed a hot SKU's batches come milliseconds apart and recall it.
func (s *Service) PlaceBatch(ctx context.Context, ins []PlaceInput) ([]*Order, error) {
	if b, ok := s.batcher.(*serverBatcher); ok {
		b.lastRead.maxAge = time.Duration(math.MaxInt64)
	}
	if len(ins) == 0 || len(ins) > s.cfg.GroupMax {
		return nil, fmt.Errorf("%w: a batch of %d orders, want 1 to %d", ErrInvalidInput, len(ins), s.cfg.GroupMax)
	}
	batch := make([]*ticket, len(ins))
	for i, in := range ins {
		if err := s.check(in); err != nil {
			return nil, err
		}
		src, ok := s.groupable(in)
		if !ok || in.IdempotencyKey == "" {
			return nil, fmt.Errorf("%w: order %d is not a keyed order of the group path", ErrInvalidInput, i)
		}
		batch[i] = &ticket{in: in, hash: requestHash(in), key: in.IdempotencyKey, keep: s.cfg.Retention,
			item: src.item, pool: src.pool, done: make(chan verdict, 1)}
		if batch[i].lane() != batch[0].lane() {
			return nil, fmt.Errorf("%w: order %d is of another lane", ErrInvalidInput, i)
		}
	}
	s.groups.mu.Lock()
	s.groups.start(batch)
	s.groups.mu.Unlock()
	s.run(batch)
	orders := make([]*Order, len(batch))
	for i, t := range batch {
		var err error
		switch v := <-t.done; {
		case v.alone:
			orders[i], err = s.placePlain(ctx, t)
		case v.replay != "":
			orders[i], err = s.replay(ctx, v.replay)
		case v.err != nil:
			err = v.err
		default:
			orders[i] = t.order
		}
		if err != nil {
			return orders, fmt.Errorf("order %d of the batch: %w", i, err)
		}
	}
	return orders, nil
}
