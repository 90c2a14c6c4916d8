package checkout

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"entgo.io/ent/dialect"

	"storefront/ent"
	"storefront/ent/idempotency"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/outbox"
	"storefront/inventory"
	"storefront/store"
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
// after another on the plain path would have answered.
func (s *Service) runBatch(batch []*ticket) []verdict {
	out := make([]verdict, len(batch))
	ctx, cancel := context.WithDeadline(context.Background(), batchDeadline(batch, time.Now()))
	defer cancel()
	onMySQL := s.db.Dialect == dialect.MySQL
	if !onMySQL {
		// SQLite has one writer: batches take turns here instead of
		// sleeping in the busy handler (whose back-off reaches 100 ms a try
		// and showed as 300 ms tails over 16 SKUs).
		s.writer.Lock()
		defer s.writer.Unlock()
	}
	// Reruns, each at most once: keys found to exist (read them first),
	// stock found moved under the lock (lock first), ids to be found by
	// order number (MySQL only, once per process).
	withKeys, lockFirst := false, false
	var err error
	for range 4 {
		if onMySQL {
			err = store.Retry(ctx, func() error { return s.batchMySQL(ctx, batch, out, withKeys, lockFirst) })
		} else {
			err = store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
				return s.batchSQLite(ctx, tx, batch, out, withKeys)
			})
		}
		switch {
		case errors.Is(err, errKeysExist) && !withKeys:
			withKeys = true
			continue
		case errors.Is(err, errStockMoved) && !lockFirst:
			lockFirst = true
			continue
		}
		break
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
	case err != nil:
		err = store.Classify(err)
		for i := range out {
			out[i] = verdict{err: err}
		}
	}
	return out
}

// decideBatch reads what the batch's orders need through q (their SKUs with
// goods, price and stock, and their idempotency records when needed) and
// settles each order: out receives every verdict the reads decide
// (replays, refused keys, unknown or unavailable SKU, no stock left), and
// the orders left to write are returned in arrival order, with whether the
// keys were read. A returned error rolls back everything, so a crash at any
// point leaves either every accepted order of the batch with its ledger
// row, or nothing.
//
// With recall, the SKUs may come from lastRead instead of a read (the
// writes check them under the lock); a refusal is then decided again from a
// read, since memory may only ever let an order through to that check.
//
// The keys are read first only when needed (withKeys, or an order refused:
// a replay may hide behind a refusal). When every order fits, the records are
// inserted without reading, and a key found to exist sends the batch round
// again with the read: one statement less per batch in a flash sale's
// common case, where every key is new.
func (s *Service) decideBatch(ctx context.Context, q querier, batch []*ticket, out []verdict, withKeys, recall bool, now time.Time) (won []int, rows []*skuRow, stock map[int64]int64, keysRead bool, err error) {
	clear(out) // the transaction may be retried
	ids := skusOf(batch)
	recalled := false
	if recall {
		rows, stock, recalled = s.lastRead.get(ids)
	}
	if !recalled {
		if rows, stock, err = lookupSKUs(ctx, q, ids); err != nil {
			return nil, nil, nil, false, err
		}
	}
	var keys map[[2]string]*ent.Idempotency
	decide := func() []int {
		var cand []int
		for i, t := range batch {
			if r := keys[[2]string{t.in.UserID, t.key}]; r != nil {
				out[i] = keyVerdict(r, t.hash, now)
				continue
			}
			lines, amount, err := s.build(t.in.Items, rows)
			if err != nil {
				out[i] = verdict{err: err}
				continue
			}
			t.line, t.order = lines[0], s.newOrder(t.in, lines, amount)
			cand = append(cand, i)
		}
		return allocate(batch, stock, out, cand)
	}
	if withKeys {
		if keys, err = readKeys(ctx, q, batch); err != nil {
			return nil, nil, nil, false, err
		}
	}
	won = decide()
	if len(won) < len(batch) && (recalled || !withKeys) {
		// A refusal is decided from the database itself, keys included.
		if recalled {
			if rows, stock, err = lookupSKUs(ctx, q, ids); err != nil {
				return nil, nil, nil, false, err
			}
		}
		if !withKeys {
			if keys, err = readKeys(ctx, q, batch); err != nil {
				return nil, nil, nil, false, err
			}
			withKeys = true
		}
		won = decide()
	}
	return won, rows, stock, withKeys, s.at("decided")
}

// batchSQLite is one batch transaction on SQLite, statement by statement:
// the IMMEDIATE transaction has held the database's write lock since BEGIN,
// so the first read is already exact.
func (s *Service) batchSQLite(ctx context.Context, tx *ent.Tx, batch []*ticket, out []verdict, withKeys bool) error {
	now := s.now().Truncate(time.Second)
	won, _, stock, withKeys, err := s.decideBatch(ctx, tx, batch, out, withKeys, false, now)
	if err != nil || len(won) == 0 {
		return err
	}
	if err := s.at("unlocked"); err != nil {
		return err
	}
	if err := s.insertOrders(ctx, tx, batch, won, now, withKeys); err != nil {
		return err
	}
	for _, id := range skusOf(batch) {
		if err := inventory.TakeLocked(ctx, tx, stock[id], movements(batch, ofSKU(batch, won, id))); err != nil {
			return err
		}
	}
	return s.at("locked")
}

// batchMySQL is one attempt at batch on MySQL, on one connection: the reads
// as plain statements (none when lastRead knows the SKUs and every order
// fits), then every write and COMMIT in one round trip (writeBatchMySQL),
// which checks under the row lock what the batch decided from. Only
// lockFirst, the rerun after that check failed, opens the transaction first
// and locks the rows before reading them.
//
// No transaction is left open on a connection going back to the pool: one
// whose end is not known is discarded.
func (s *Service) batchMySQL(ctx context.Context, batch []*ticket, out []verdict, withKeys, lockFirst bool) error {
	conn, err := s.db.SQL.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	open := false // a transaction is open and this function must end it
	defer func() {
		if p := recover(); p != nil {
			discard(conn) // its transaction's state is unknown
			panic(p)
		}
		if open {
			if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
				discard(conn)
			}
		}
	}()
	if lockFirst {
		if _, err := conn.ExecContext(ctx, "START TRANSACTION"); err != nil {
			discard(conn)
			return err
		}
		open = true
		if err := lockSKUs(ctx, conn, skusOf(batch)); err != nil {
			return err
		}
	}
	now := s.now().Truncate(time.Second)
	// The rerun that locks first reads under the lock: nothing to recall.
	won, rows, stock, withKeys, err := s.decideBatch(ctx, conn, batch, out, withKeys, !lockFirst, now)
	if err == nil && len(won) > 0 {
		if !lockFirst { // the stage before the row is locked
			err = s.at("unlocked")
		}
		if err == nil {
			open = false // writeBatchMySQL ends it, or discards the connection
			err = s.writeBatchMySQL(ctx, conn, batch, won, now, withKeys, !lockFirst)
		}
	}
	if err != nil {
		s.lastRead.drop(skusOf(batch))
		return err
	}
	s.lastRead.put(rows, left(batch, won, stock))
	return nil
}

// left is the stock the orders won of batch leave of each SKU.
func left(batch []*ticket, won []int, stock map[int64]int64) map[int64]int64 {
	l := maps.Clone(stock)
	for _, i := range won {
		l[batch[i].item] -= batch[i].line.Quantity
	}
	return l
}

// discard makes database/sql close conn instead of pooling it again: its
// transaction may still be open.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// keyVerdict answers an order whose key is already in the database, as the
// plain path's claim would.
func keyVerdict(r *ent.Idempotency, hash string, now time.Time) verdict {
	pending := r.State == statePending
	expired := !pending && r.ExpiresAt.Before(now)
	abandoned := pending && r.LeaseUntil.Before(now)
	switch {
	case expired || abandoned:
		return verdict{alone: true} // taking a key over is the plain path's claim
	case r.RequestHash != hash:
		return verdict{err: ErrIdempotencyKeyReused}
	case r.State == stateDone && r.OrderSn != nil:
		return verdict{replay: *r.OrderSn}
	}
	return verdict{err: ErrIdempotencyInProgress}
}

// allocate walks the orders idx of batch in arrival order and gives each all
// of its quantity or nothing, as one CAS per order would: a refused order gets
// OUT_OF_STOCK and does not stop later, smaller ones of its SKU.
func allocate(batch []*ticket, stock map[int64]int64, out []verdict, idx []int) []int {
	left := maps.Clone(stock)
	var fit []int
	for _, i := range idx {
		l := batch[i].line
		if l.Quantity <= left[l.ItemID] {
			left[l.ItemID] -= l.Quantity
			fit = append(fit, i)
			out[i] = verdict{}
		} else {
			out[i] = verdict{err: outOfStock(l)}
		}
	}
	return fit
}

// ofSKU returns the orders idx of batch that are for SKU id, in order.
func ofSKU(batch []*ticket, idx []int, id int64) []int {
	var of []int
	for _, i := range idx {
		if batch[i].item == id {
			of = append(of, i)
		}
	}
	return of
}

// lookupSKUs reads the SKUs with their goods, and their stock (an unknown id
// is simply missing).
func lookupSKUs(ctx context.Context, q querier, ids []int64) ([]*skuRow, map[int64]int64, error) {
	rows, err := readSKUs(ctx, q, "s.id IN ("+placeholders(len(ids))+")", anys(ids))
	if err != nil {
		return nil, nil, err
	}
	stock := make(map[int64]int64, len(rows))
	for _, r := range rows {
		stock[r.id] = r.stock
	}
	return rows, stock, nil
}

// lockSKUs locks the rows of ids, in ascending order.
func lockSKUs(ctx context.Context, q querier, ids []int64) error {
	rs, err := q.QueryContext(ctx, "SELECT id FROM sku WHERE id IN ("+placeholders(len(ids))+") ORDER BY id FOR UPDATE", anys(ids)...)
	if err != nil {
		return fmt.Errorf("locking SKUs %v: %w", ids, err)
	}
	return rs.Close()
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

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

// insertOrders writes the DONE idempotency records, the orders, their lines
// and their OrderPlaced events: four multi-row statements for the batch,
// and reads the orders' ids by number. The records go first: a key claimed
// meanwhile fails the batch before more is written.
func (s *Service) insertOrders(ctx context.Context, tx *ent.Tx, batch []*ticket, won []int, now time.Time, keysRead bool) error {
	if err := s.insertKeys(ctx, tx, batch, won, now, keysRead); err != nil {
		return err
	}
	orders := store.NewInsert(order.Table)
	lines := store.NewInsert(orderline.Table)
	placed := make([]*Order, len(won))
	for j, i := range won {
		o := batch[i].order
		placed[j] = o
		orders.Row(o.write)
		lines.Row(func(v store.Values) { writeLine(v, o, &batch[i].line.OrderLine) })
	}
	if err := store.Exec(ctx, tx, orders); err != nil {
		return fmt.Errorf("inserting orders: %w", err)
	}
	if err := store.Exec(ctx, tx, lines); err != nil {
		return fmt.Errorf("inserting order lines: %w", err)
	}
	ev, err := placedEvent(placed, now)
	if err != nil {
		return err
	}
	if err := store.Exec(ctx, tx, store.NewInsert(outbox.Table).Row(ev.write)); err != nil {
		return fmt.Errorf("writing %s events: %w", EventOrderPlaced, err)
	}
	return readOrderIDs(ctx, tx, placed)
}

// readOrderIDs sets each order's id, found by its number.
func readOrderIDs(ctx context.Context, q querier, orders []*Order) error {
	sns := make([]any, len(orders))
	byNumber := make(map[string]*Order, len(orders))
	for i, o := range orders {
		sns[i] = o.OrderSn
		byNumber[o.OrderSn] = o
	}
	rs, err := q.QueryContext(ctx, "SELECT id, order_sn FROM orders WHERE order_sn IN ("+placeholders(len(sns))+")", sns...)
	if err != nil {
		return fmt.Errorf("reading order ids: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var id int64
		var sn string
		if err := rs.Scan(&id, &sn); err != nil {
			return fmt.Errorf("reading order ids: %w", err)
		}
		byNumber[sn].ID = id
	}
	if err := rs.Err(); err != nil {
		return fmt.Errorf("reading order ids: %w", err)
	}
	for _, o := range orders {
		if o.ID == 0 {
			return fmt.Errorf("order %s was written without an id", o.OrderSn)
		}
	}
	return nil
}

// insertKeys writes the orders' DONE idempotency records in one statement.
// Unread keys are inserted skipping existing ones, and any skip sends the
// batch round again (errKeysExist); read keys that exist anyway were claimed
// meanwhile (errKeyRace).
func (s *Service) insertKeys(ctx context.Context, tx *ent.Tx, batch []*ticket, won []int, now time.Time, keysRead bool) error {
	ins := store.NewInsert(idempotency.Table)
	for _, i := range won {
		ins.Row(s.doneRecord(batch[i], now).write)
	}
	q, args := ins.SQL()
	if !keysRead {
		q += " ON CONFLICT (user_id, `key`) DO NOTHING" // SQLite: 0 rows affected for an existing key
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		if keysRead && store.IsDuplicate(err) {
			return errKeyRace
		}
		return fmt.Errorf("recording idempotency keys: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != int64(len(won)) {
		return errKeysExist
	}
	return nil
}

// movements are the stock movements of the orders keep of batch (one SKU),
// in booking order.
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
