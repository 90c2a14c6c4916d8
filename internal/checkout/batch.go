package checkout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/codes"

	"storefront/ent"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
)

// errKeyRace: a key of the batch was claimed by someone else (another
// instance, the plain path) after the batch read the keys. Rare; the batch is
// rolled back and each of its orders is placed on the plain path, whose claim
// gives each its own answer.
var errKeyRace = errors.New("checkout: an idempotency key of the batch was claimed concurrently")

// errKeysExist: the batch skipped reading its keys (every order fitted) and
// then found some already recorded; it runs again, reading them first.
var errKeysExist = errors.New("checkout: some idempotency keys of the batch exist")

// batchTimeout bounds a batch of which some order came without a deadline.
const batchTimeout = 10 * time.Second

// batchDeadline is the latest deadline among the batch's orders, no later
// than now + batchTimeout: a batch serves many buyers, so none of them
// giving up (or being about to) may fail the others' orders. Each buyer
// stops waiting at its own deadline regardless (placeGrouped). Batches take
// milliseconds; only a stalled database ever reaches it.
func batchDeadline(batch []*ticket, now time.Time) time.Time {
	limit := now.Add(batchTimeout)
	var latest time.Time
	for _, t := range batch {
		if t.deadline.IsZero() {
			return limit
		}
		if t.deadline.After(latest) {
			latest = t.deadline
		}
	}
	if latest.After(limit) {
		return limit
	}
	return latest
}

// runBatch places the orders of batch (in arrival order, one SKU or several)
// in one transaction and returns each one's verdict: what placing them one
// after another on the plain path would have answered, and how long it held
// what its lane holds (hold: SQLite's writer).
func (s *Service) runBatch(batch []*ticket) (out []verdict, held time.Duration) {
	out = make([]verdict, len(batch))
	ctx, cancel := context.WithDeadline(context.Background(), batchDeadline(batch, time.Now()))
	defer cancel()
	ctx, span := s.batchSpan(ctx, batch)
	defer span.End()
	release := s.batcher.hold(batch[0].lane())
	began := time.Now()
	defer func() { release(); held = time.Since(began) }()
	// Reruns in the one loop of store.Attempts: keys found to exist (read
	// them first), stock found moved under the lock (lock first), each at
	// most once; then a pool found moved, again (poolReruns).
	var r rerun
	err := store.Attempts(ctx, func() error { return s.batcher.attempt(ctx, s, batch, out, r) }, func(err error) bool {
		switch {
		case errors.Is(err, errKeysExist) && !r.withKeys:
			r.withKeys = true
		case errors.Is(err, errStockMoved) && !r.fresh:
			// Most often an admin's edit of the terms: a fresh read under
			// the goods lock sees it, and no later edit can commit before it.
			r.fresh = true
		case errors.Is(err, errStockMoved) && !r.lockFirst:
			r.lockFirst = true
		case errors.Is(err, errStockMoved) && r.poolMoves < poolReruns && ctx.Err() == nil:
			// With the SKU rows locked first only a pool can have moved
			// (pools are not locked first: attempt says why): another
			// instance's batch of the pool committed between this one's
			// read and its check. Each rerun reads the pool afresh, and
			// near its end its stock only falls, so the reruns end in
			// orders or refusals; three instances on one pool refused 16–28
			// of 1000 buyers UNAVAILABLE with one lock-first rerun
			// (TestPoolThreeInstancesRefuseOnlyOutOfStock).
			r.poolMoves++
		default:
			return false
		}
		return true
	})
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	switch {
	case errors.Is(err, errKeyRace):
		for i := range out {
			out[i] = verdict{alone: true}
		}
	case errors.Is(err, errKeysExist), errors.Is(err, errStockMoved):
		// Out of reruns (each rolled back): nothing was written, so the
		// buyers may simply try again.
		err = fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		for i := range out {
			out[i] = verdict{err: err}
		}
	case err != nil && s.memberFault(ctx, err):
		// Nothing of the batch was written; each order is placed again on
		// its own (memberFault says why that way).
		slog.Warn("checkout batch: the database refused an order's data; placing the batch's orders one by one",
			"orders", len(batch), "err", err)
		for i := range out {
			out[i] = verdict{alone: true}
		}
	case err != nil:
		err = store.Classify(err)
		for i := range out {
			out[i] = verdict{err: err}
		}
	}
	return out, 0 // held: set as the hold is released
}

// memberFault reports that the batch failed for what some of its orders
// hold, not for a cause of the whole batch: a value the database refuses in
// one order's row (PostgreSQL's NUL, MariaDB's invalid utf8mb4, a value too
// long) or a constraint on one row (a duplicate order number). One buyer's
// data must not fail the others' orders, so the batch's orders
// are then placed one by one on the plain path, as a key claimed during the
// batch already sends them (errKeyRace): each gets its own answer, the
// offending one its own error classified as the plain path classifies it.
//
// Why one by one and not bisection: the plain path is the reference every
// batch's verdicts must equal, so its answers are right by construction,
// whatever the fault (one member, several, or only their combination, as
// the one OrderPlaced row the batch writes for all of them), and the case
// needs no code of its own. Bisection would find one offender in about
// 2·log2(n) batches instead of n plain orders, but would rerun the halves'
// decisions, memory and reruns for a case the door's input rules
// make rare; its only gain is throughput while it happens, and a batch that
// fails this way costs at most its own orders' worth of plain transactions.
//
// A cause of the whole batch keeps its answer for every order: a
// connection lost, a deadlock or lock wait past its retries, a deadline, an
// unavailable database (all UNAVAILABLE from store.Classify), a guard's
// refusal or a key race (handled before this). Placing each order alone
// there would only multiply the load on a database already failing.
func (s *Service) memberFault(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(store.Classify(err), store.ErrUnavailable) {
		return false
	}
	return s.batcher.refusedData(err)
}

// rerun says how an attempt at a batch runs after an earlier one of the
// same batch was rolled back.
type rerun struct {
	withKeys bool // read the idempotency records before deciding
	// fresh: decided once from what turned out stale (an edit, or stock
	// taken elsewhere); open the transaction, lock the goods (shared) and
	// read again, without the memory. Only a second mismatch locks the SKU
	// rows first: a batch holding SKU rows while it inserts its orders can
	// deadlock with a batch in flight whose line inserts hold gap locks on
	// orders.order_sn and that then waits for those rows.
	fresh     bool
	lockFirst bool // open the transaction and lock the goods and SKU rows before reading
	poolMoves int  // reruns after lockFirst, for a pool another batch changed
}

// poolReruns bounds the reruns of a batch whose pool kept moving (at a few
// milliseconds each, inside the batch's deadline).
const poolReruns = 16

// decision is what a batch's reads decided: the orders to write (won, in
// arrival order), from which SKU rows and stock, and whether the keys were
// read.
type decision struct {
	won      []int
	rows     []*skuRow
	stock    map[int64]int64
	pools    poolState
	held     map[promo.Holding]int64 // purchase counts of the orders' limited goods
	pricers  []Pricer                // the adjustments' terms for the orders (adjust.go)
	keysRead bool
}

// decideBatch reads what the batch's orders need through q (their SKUs with
// goods, price and stock, and their idempotency records when needed; the
// customers' coupons through ec, checked again under their lock) and
// settles each order (decide): out receives every verdict the reads decide
// (replays, refused keys, unknown or unavailable SKU, no stock left). A
// returned error rolls back everything, so a crash at any point leaves
// either every accepted order of the batch with its ledger row, or nothing.
//
// With recall (MySQL's lastRead), the SKUs and pools may come from memory
// instead of a read (the writes check them under the lock); a refusal is then decided
// again from a read, since memory may only ever let an order through to
// that check.
//
// The keys are read first only when needed (withKeys, or an order refused:
// a replay may hide behind a refusal). When every order fits, the records are
// inserted without reading, and a key found to exist sends the batch round
// again with the read: one statement less per batch in a flash sale's
// common case, where every key is new.
func (s *Service) decideBatch(ctx context.Context, q querier, ec *ent.Client, batch []*ticket, out []verdict, withKeys bool, recall *lastRead, now time.Time) (d decision, err error) {
	clear(out) // the transaction may be retried
	ids := skusOf(batch)
	recalled := false
	if recall != nil {
		d.rows, d.stock, recalled = recall.get(ids)
	}
	if !recalled {
		if d.rows, d.stock, err = lookupSKUs(ctx, q, ids); err != nil {
			return d, err
		}
	}
	// Kept pools come with the buyers kept; the others are taken as
	// holding nothing and checked under the lock (lastRead).
	poolsRecalled := false
	if recall != nil && len(poolsOf(batch)) > 0 {
		d.pools, poolsRecalled = recall.getPools(batch)
	}
	if !poolsRecalled {
		if d.pools, err = readPoolState(ctx, q, batch); err != nil {
			return d, err
		}
	}
	var keys map[[2]string]*ent.Idempotency
	if withKeys {
		if keys, err = readKeys(ctx, q, batch); err != nil {
			return d, err
		}
	}
	if d.held, err = readHeld(ctx, q, batch, d.rows); err != nil {
		return d, err
	}
	ins := make([]*PlaceInput, len(batch))
	for i, t := range batch {
		ins[i] = &t.in
	}
	if d.pricers, err = s.readPricers(ctx, ec, ins); err != nil {
		return d, err
	}
	d.won = s.decide(batch, d, keys, out, now)
	if len(d.won) < len(batch) && (recalled || poolsRecalled || !withKeys) {
		// A refusal is decided from the database itself, keys included.
		if recalled {
			if d.rows, d.stock, err = lookupSKUs(ctx, q, ids); err != nil {
				return d, err
			}
		}
		if poolsRecalled {
			if d.pools, err = readPoolState(ctx, q, batch); err != nil {
				return d, err
			}
		}
		if !withKeys {
			if keys, err = readKeys(ctx, q, batch); err != nil {
				return d, err
			}
			withKeys = true
		}
		d.won = s.decide(batch, d, keys, out, now)
	}
	d.keysRead = withKeys
	return d, s.at("decided")
}

// readPoolState reads the pools the batch's orders name and their buyers'
// units of them (nothing when no order names a pool).
func readPoolState(ctx context.Context, q querier, batch []*ticket) (poolState, error) {
	var ids []int64
	var buyers []inventory.PoolBuyer
	for _, t := range batch {
		if t.pool != 0 {
			ids = append(ids, t.pool)
			buyers = append(buyers, t.buyer())
		}
	}
	if len(ids) == 0 {
		return poolState{}, nil
	}
	var ps poolState
	var err error
	ps.pools, ps.units, err = inventory.ReadPoolState(ctx, q, ids, buyers)
	return ps, err
}

// readHeld reads the purchase counts of the batch's buyers of goods with a
// purchase limit (rows: the SKUs read; nothing when none has one).
func readHeld(ctx context.Context, q querier, batch []*ticket, rows []*skuRow) (map[promo.Holding]int64, error) {
	limited := map[int64]int64{} // SKU → goods, for SKUs of limited goods
	for _, r := range rows {
		if r.limit != nil {
			limited[r.id] = r.goodsID
		}
	}
	if len(limited) == 0 {
		return nil, nil
	}
	var hs []promo.Holding
	for _, t := range batch {
		if g, ok := limited[t.item]; ok {
			hs = append(hs, promo.Holding{Goods: g, User: t.in.UserID})
		}
	}
	return promo.Held(ctx, q, hs)
}

// mainSKUs returns the distinct SKUs of batch whose orders take main stock,
// ascending.
func mainSKUs(batch []*ticket) []int64 {
	var ids []int64
	for _, src := range sourcesOf(batch) {
		if src.pool == 0 {
			ids = append(ids, src.item)
		}
	}
	return ids
}

// poolsOf returns the distinct pools of batch, ascending.
func poolsOf(batch []*ticket) []int64 {
	var ids []int64
	for _, src := range sourcesOf(batch) {
		if src.pool != 0 {
			ids = append(ids, src.pool)
		}
	}
	return slices.Compact(ids)
}

// lookupSKUs reads the SKUs with their goods, and their stock (an unknown id
// is simply missing).
func lookupSKUs(ctx context.Context, q querier, ids []int64) ([]*skuRow, map[int64]int64, error) {
	rows, err := readSKUs(ctx, q, "s.id IN ("+store.Marks(len(ids))+")", anys(ids))
	if err != nil {
		return nil, nil, err
	}
	stock := make(map[int64]int64, len(rows))
	for _, r := range rows {
		stock[r.id] = r.available()
	}
	return rows, stock, nil
}

func anys(ids []int64) []any {
	a := make([]any, len(ids))
	for i, id := range ids {
		a[i] = id
	}
	return a
}

// readKeys reads the batch's (user, key) records in one statement, through
// q: on MySQL the batch's own connection, which may hold the SKU rows locked
// (lockFirst) — a second connection from the pool could wait behind buyers
// who wait on those very rows.
func readKeys(ctx context.Context, q querier, batch []*ticket) (map[[2]string]*ent.Idempotency, error) {
	var where strings.Builder
	args := make([]any, 0, 2*len(batch))
	for i, t := range batch {
		if i > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString("(user_id = ? AND `key` = ?)")
		args = append(args, t.in.UserID, t.key)
	}
	rs, err := q.QueryContext(ctx, "SELECT user_id, `key`, request_hash, state, lease_until, order_sn, expires_at "+
		"FROM idempotency_key WHERE "+where.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("reading idempotency keys: %w", err)
	}
	defer rs.Close()
	m := make(map[[2]string]*ent.Idempotency, len(batch))
	for rs.Next() {
		var r ent.Idempotency
		var lease, expires sql.NullTime
		var sn sql.NullString
		if err := rs.Scan(&r.UserID, &r.Key, &r.RequestHash, &r.State, &lease, &sn, &expires); err != nil {
			return nil, fmt.Errorf("reading idempotency keys: %w", err)
		}
		r.LeaseUntil, r.ExpiresAt = lease.Time, expires.Time
		if sn.Valid {
			r.OrderSn = &sn.String
		}
		m[[2]string{r.UserID, r.Key}] = &r
	}
	return m, rs.Err()
}

// movements are the stock movements of the orders keep of batch (one
// source), in booking order.
func movements(batch []*ticket, keep []int) []inventory.Movement {
	m := make([]inventory.Movement, len(keep))
	for j, i := range keep {
		m[j] = sale(batch[i].order, &batch[i].line.OrderLine).Movement
	}
	return m
}

// at runs the test hook of a batch stage.
func (s *Service) at(stage string) error {
	if s.hook == nil {
		return nil
	}
	return s.hook(stage)
}
