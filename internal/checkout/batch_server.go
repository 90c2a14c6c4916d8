package checkout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"storefront/ent/idempotency"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/outbox"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// errStockMoved: the batch decided from a plain read (or lastRead's memory
// of one), and under the lock a SKU had less stock than that (a multi-SKU
// order or another instance took some in between) or was no longer what the
// batch read (price, names, on sale). The batch is rolled back and runs again
// with the rows locked before it reads and decides.
var errStockMoved = errors.New("checkout: stock moved between the batch's read and its lock")

// serverBatcher writes batches on a database server (MySQL, MariaDB,
// PostgreSQL), where many connections write at once: the reads as plain
// statements on the batch's connection (none when lastRead knows the SKUs
// and every order fits), then every write and COMMIT in one round trip
// (its dialect's batchWriter), which checks under the row lock what the
// batch decided from.
type serverBatcher struct {
	lastRead *lastRead // the SKU rows batches read, checked before use
	w        batchWriter
}

// batchWriter is what a server's dialect does its own way in a batch: the
// rest (reads, decisions, reruns, memory) is serverBatcher's. Its stock
// and the transaction around it are the dialect's inventory.BatchEngine;
// the writer adds the batch's rows and reads their answer.
type batchWriter interface {
	engine() inventory.BatchEngine
	// write writes the decided orders of batch and commits them in one
	// round trip on c, opening the transaction first when begin (else it
	// is open, with rows locked). It returns errStockMoved when a guard
	// under the lock failed, errKeysExist or errKeyRace for a key found
	// recorded, with the transaction ended or c's state unknown.
	write(ctx context.Context, s *Service, c *store.Conn, batch []*ticket, d decision, now time.Time, begin bool) error
}

// commitHooks let a test make a writer's statement fail just before its
// COMMIT (beforeCommit appends what fails and returns the error the batch
// then answers) or just after it (afterCommit).
type commitHooks struct {
	beforeCommit func(q *store.Text) error
	afterCommit  func(q *store.Text)
}

// batch is the engine's batch of the decided orders (placed, in arrival
// order): their stock write and the hooks; the writer adds its rows.
func (h commitHooks) batch(batch []*ticket, d decision, now time.Time, begin bool) (*inventory.Batch, []*Order) {
	placed := make([]*Order, len(d.won))
	for j, i := range d.won {
		placed[j] = batch[i].order
	}
	return &inventory.Batch{StockWrite: stockWrite(batch, d, now), Begin: begin,
		BeforeCommit: h.beforeCommit, AfterCommit: h.afterCommit}, placed
}

// writeErr is the batch's answer to the engine's error: a guard that
// failed (errStockMoved) or an idempotency key found recorded (errKeyRace
// when the batch had read the keys, errKeysExist when it had not) runs the
// batch again; any other is the batch's.
func writeErr(err error, batch []*ticket, d decision) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, inventory.ErrMoved):
		return errStockMoved
	case d.keysRead && isDuplicateKey(err):
		return errKeyRace
	case isDuplicateKey(err):
		return errKeysExist
	}
	return fmt.Errorf("writing the batch of SKUs %v: %w", skusOf(batch), err)
}

// isDuplicateKey reports an idempotency key that exists (a duplicate on
// the (user, key) index).
func isDuplicateKey(err error) bool { return store.IsDuplicateOf(err, "idempotency_user_id_key") }

func (b *serverBatcher) hold(int) func() { return func() {} }

func (b *serverBatcher) lone(int) (func(), bool) { return nil, false }

func (b *serverBatcher) refusedData(err error) bool { return b.w.engine().RefusedData(err) }

// attempt is one attempt at batch, on one connection of the batch pool.
// Only the reruns open the transaction first: fresh (after the check under
// the lock failed once) locks the goods before it reads, lockFirst (after a
// second failure) the goods and the SKU rows.
func (b *serverBatcher) attempt(ctx context.Context, s *Service, batch []*ticket, out []verdict, r rerun) error {
	err := s.db.OnConn(ctx, func(ctx context.Context, c *store.Conn) error {
		recall := b.lastRead
		if r.fresh || r.lockFirst {
			// Their goods are locked first (shared): the lock order goods →
			// SKU of internal/inventory/goods_lock.go, which the batch's statement
			// follows too. They are found before the transaction begins, so
			// that no plain read fixes its snapshot before the rows are
			// locked (MySQL's REPEATABLE READ). Under the goods lock no edit
			// of their terms can commit, so a fresh rerun that then reads
			// the rows plainly and inserts its orders before it takes the
			// SKU rows (the lock order of every batch) finds the terms it
			// read; only stock taken meanwhile can still make it fail.
			goods, err := inventory.GoodsOfSKUs(ctx, c, mainSKUs(batch))
			if err != nil {
				return err
			}
			// The lock wait is bounded before the first lock is taken, as the
			// batch's statement bounds its own.
			if err := b.w.engine().Begin(ctx, c); err != nil {
				return err
			}
			if err := b.w.engine().LockGoods(ctx, c, goods); err != nil {
				return err
			}
			recall = nil
		}
		if r.lockFirst {
			// Pools are not locked first: with nothing recalled their
			// rows and counters are read afresh, and the check under the
			// lock decides. Holding a pool's row before the batch's inserts
			// deadlocked with the batch in flight, whose line inserts hold
			// gap locks on orders.order_sn.
			if err := inventory.LockSKUs(ctx, c, mainSKUs(batch)); err != nil {
				return err
			}
			recall = nil // read under the lock: nothing to recall
		}
		now := s.now().Truncate(time.Second)
		d, err := s.decideBatch(ctx, c, s.db.Client, batch, out, r.withKeys, recall, now)
		if err != nil {
			return err
		}
		if len(d.won) == 0 {
			// Every order refused, from a read (a refusal is never decided
			// from memory): keep what was read of the pools' buyers, so a
			// buyer at the limit is refused from memory next time.
			b.lastRead.putPools(d.pools, batch, nil)
			return nil
		}
		if !r.lockFirst && !r.fresh { // the stage before the row is locked
			if err := s.at("unlocked"); err != nil {
				return err
			}
		}
		if err := b.w.write(ctx, s, c, batch, d, now, !r.lockFirst && !r.fresh); err != nil {
			return err
		}
		b.lastRead.put(d.rows, left(batch, d.won, d.stock))
		b.lastRead.putPools(d.pools, batch, d.won)
		return nil
	})
	if err != nil {
		b.lastRead.drop(skusOf(batch))
		b.lastRead.dropPools(batch)
	}
	return err
}

// stockWrite is what the decided orders of batch (won) do to stock: the
// guards of their main-stock goods (ascending), then one take per source
// in the lock order, each on the terms its orders were decided on.
func stockWrite(batch []*ticket, d decision, now time.Time) inventory.StockWrite {
	w := inventory.StockWrite{At: now}
	for _, src := range sourcesOf(batch) {
		of := ofSource(batch, d.won, src)
		if len(of) == 0 {
			continue // every order of this source was refused
		}
		first := sale(batch[of[0]].order, &batch[of[0]].line.OrderLine)
		t := inventory.Take{Terms: first.Terms, Lock: first.Lock, Moves: movements(batch, of), GoodsLimit: first.GoodsLimit}
		if src.pool != 0 {
			t.Pool, t.Buyers = d.pools.pools[src.pool], buyersOf(batch, of)
		} else if !slices.ContainsFunc(w.Goods, func(g inventory.GoodsOnSale) bool { return g.ID == first.GoodsID }) {
			w.Goods = append(w.Goods, inventory.GoodsOnSale{ID: first.GoodsID, Name: first.GoodsName, Lock: first.Lock, Limit: first.GoodsLimit})
		}
		w.Takes = append(w.Takes, t)
	}
	slices.SortFunc(w.Goods, func(a, b inventory.GoodsOnSale) int { return cmp.Compare(a.ID, b.ID) })
	won := make([]*Order, len(d.won))
	for j, i := range d.won {
		won[j] = batch[i].order
	}
	w.Claims, w.Counters = couponClaims(now, won...), purchaseCounters(won...)
	return w
}

// writeOrders writes a batch's inserts into q, each statement ended by
// "; ": the idempotency records (DONE with their order), the orders (their
// INSERT followed by returning, a dialect's way to say their ids, or ""),
// the lines (written by lines, which find their order by its number) and the
// one OrderPlaced outbox row. A key that exists stops the batch at its INSERT
// with a duplicate-key error: unread, the batch runs again reading the keys
// first (errKeysExist); read, it was claimed meanwhile (errKeyRace). A plain
// INSERT, not an upsert and a count: that form locked and checked every key
// the slow way (MySQL).
func (s *Service) writeOrders(q *store.Text, batch []*ticket, won []int, placed []*Order, now time.Time, returning string, lines func(q *store.Text, batch []*ticket, won []int, placed []*Order)) error {
	n := len(won)
	q.Insert(idempotency.Table, n, func(j int, v store.Values) { s.doneRecord(batch[won[j]], now).write(v) })
	q.SQL("; ")
	q.Insert(order.Table, n, func(j int, v store.Values) { placed[j].write(v) })
	q.SQL(returning + "; ")
	lines(q, batch, won, placed)
	writeAdjustments(q, placed)
	ev, err := placedEvent(placed, traceparents(batch, won), now)
	if err != nil {
		return err
	}
	q.Insert(outbox.Table, 1, func(_ int, v store.Values) { ev.write(v) })
	q.SQL("; ")
	return nil
}

// linesEach writes the batch's lines as one multi-row INSERT, each row
// finding its order by number (orderRef).
func linesEach(q *store.Text, batch []*ticket, won []int, placed []*Order) {
	q.Insert(orderline.Table, len(won), func(j int, v store.Values) { writeLine(v, placed[j], &batch[won[j]].line.OrderLine) })
	q.SQL("; ")
}
