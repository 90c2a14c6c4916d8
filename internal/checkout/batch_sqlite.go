package checkout

import (
	"context"
	"errors"
	"fmt"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"storefront/ent"
	"storefront/ent/idempotency"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/outbox"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// sqliteBatcher writes batches on SQLite, statement by statement inside an
// IMMEDIATE transaction, which holds the database's write lock from BEGIN:
// the first read is already exact, nothing is recalled, nothing needs
// checking under a lock later.
type sqliteBatcher struct {
	// writer: SQLite has one writer, so batches take turns here instead of
	// sleeping in the busy handler (whose back-off reaches 100 ms a try and
	// showed as 300 ms tails over 16 SKUs), the lanes in turn (writer.go);
	// a lone order on the plain path takes it too (placeLone).
	writer writer
}

func (b *sqliteBatcher) hold(lane int) func() { b.writer.lock(lane); return b.writer.unlock }

// lone takes the writer for a lone order when it is free (nothing in
// flight leaves it free): on SQLite a batch of one saves no round trip and
// pays a hand-off to the batch's goroutine and back (placeLone).
func (b *sqliteBatcher) lone(lane int) (func(), bool) {
	if !b.writer.tryLock(lane) {
		return nil, false
	}
	return b.writer.unlock, true
}

// refusedData: SQLite refuses a row only by a constraint (SQLITE_CONSTRAINT
// and its extended codes: a duplicate order number, a foreign key), a value
// past its limits (SQLITE_TOOBIG) or of the wrong type (SQLITE_MISMATCH);
// its columns take any text. An idempotency key's duplicate never reaches
// here (insertKeys: errKeysExist, errKeyRace).
func (b *sqliteBatcher) refusedData(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_TOOBIG, sqlite3.SQLITE_MISMATCH:
		return true
	}
	return false
}

func (b *sqliteBatcher) attempt(ctx context.Context, s *Service, batch []*ticket, out []verdict, r rerun) error {
	return store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		now := s.now().Truncate(time.Second)
		d, err := s.decideBatch(ctx, tx, tx.Client(), batch, out, r.withKeys, nil, now)
		if err != nil || len(d.won) == 0 {
			return err
		}
		if err := s.at("unlocked"); err != nil {
			return err
		}
		if err := s.insertOrders(ctx, tx, batch, d.won, now, d.keysRead); err != nil {
			return err
		}
		read := make(map[int64]inventory.Balance, len(d.rows))
		for _, r := range d.rows {
			read[r.id] = inventory.Balance{Stock: r.stock, Locked: r.locked}
		}
		if err := inventory.WriteLocked(ctx, tx, stockWrite(batch, d, now), read); err != nil {
			return err
		}
		return s.at("locked")
	})
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
	if adjs := adjustmentRows(placed...); adjs != nil {
		if err := store.Exec(ctx, tx, adjs); err != nil {
			return fmt.Errorf("inserting order adjustments: %w", err)
		}
	}
	ev, err := placedEvent(placed, traceparents(batch, won), now)
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
	found, err := findOrderIDs(ctx, q, orders)
	if err != nil {
		return fmt.Errorf("reading order ids: %w", err)
	}
	if found != len(orders) {
		return fmt.Errorf("%d of %d orders were written without an id", len(orders)-found, len(orders))
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
