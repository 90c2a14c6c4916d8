package checkout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/enums"
	"storefront/inventory"
)

// errStockMoved: the batch decided from a plain read (or lastRead's memory
// of one), and under the lock a SKU had less stock than that (a multi-SKU
// order or another instance took some in between) or was no longer what the
// batch read (price, names, on sale). The batch is rolled back and runs again
// with the rows locked before it reads and decides.
var errStockMoved = errors.New("checkout: stock moved between the batch's read and its lock")

// writeBatchMySQL writes the decided orders of batch (won, in arrival order)
// and commits them in one round trip on conn: a query that opens the
// transaction (begin; otherwise it is open, with the rows locked), inserts
// the idempotency records, orders, lines and OrderPlaced events, then per
// SKU locks the row, books one ledger row per order from the locked balance
// and takes the SKU's total by CAS, then commits unless a check failed. It
// returns with the transaction ended, or with conn discarded.
//
// Why one round trip: on a hot SKU the batch is the unit of throughput, and
// statement by statement it took ten round trips (about 0.5 ms each on a
// busy 2-core machine, ent's builders included) for what the server does in
// a fraction of that. The server runs the statements in order and stops at
// the first error; the transaction is then rolled back in one more trip.
//
// On MariaDB the statements go as one anonymous compound statement (BEGIN
// NOT ATOMIC … END): as separate statements of a multi-statement query each
// sends its own OK packet, and those sends (a syscall each, and a wake-up of
// the client) measured 11.5 % of the server's CPU at 19 packets a batch.
func (s *Service) writeBatchMySQL(ctx context.Context, conn *sql.Conn, batch []*ticket, won []int, now time.Time, keysRead, begin bool) error {
	q := &sqlText{}
	q.b.Grow(2048 + 800*len(won)) // ~780 bytes an order on the demo catalog
	rows := func(n int, row func(j int)) {
		for j := range n {
			if j > 0 {
				q.sql(", ")
			}
			row(j)
		}
	}
	ticketOf := func(j int) *ticket { return batch[won[j]] }
	n := len(won)

	if s.db.MariaDB {
		q.sql("BEGIN NOT ATOMIC ")
	}
	if begin {
		q.sql("START TRANSACTION; ")
	}
	q.sql("SET @s := NULL, @c := 0")
	if dl, ok := ctx.Deadline(); ok {
		// The server goes on after the client gives up (the driver only
		// closes the socket), so a lock wait must not outlast the batch's
		// deadline by more than the second InnoDB counts in: otherwise the
		// batch could commit long after its buyers were told UNAVAILABLE.
		secs := int64(math.Ceil(time.Until(dl).Seconds()))
		q.sql(", SESSION innodb_lock_wait_timeout = ")
		q.int(min(max(secs, 1), 50))
	}
	q.sql("; ")
	// Idempotency records, DONE with their order. A key that exists stops
	// the batch here with a duplicate-key error: unread, the batch runs
	// again reading the keys first (errKeysExist); read, it was claimed
	// meanwhile (errKeyRace). A plain INSERT, not ON DUPLICATE KEY UPDATE
	// and a count: that form locked and checked every key the slow way.
	q.sql("INSERT INTO idempotency_key (user_id, `key`, request_hash, state, lease_until, order_sn, created_at, expires_at) VALUES ")
	rows(n, func(j int) {
		t := ticketOf(j)
		q.sql("(")
		q.str(t.in.UserID)
		q.sql(", ")
		q.str(t.key)
		q.sql(", ")
		q.str(t.hash)
		q.sql(", ")
		q.str(stateDone)
		q.sql(", ")
		q.time(now.Add(s.cfg.Lease))
		q.sql(", ")
		q.str(t.order.OrderSn)
		q.sql(", ")
		q.time(now)
		q.sql(", ")
		q.time(now.Add(t.keep))
		q.sql(")")
	})
	q.sql("; ")

	// close_reason, needs_review and version start at their defaults.
	q.sql("INSERT INTO orders (order_sn, user_id, status, amount, currency, remark, created_at, expires_at) VALUES ")
	rows(n, func(j int) {
		o := ticketOf(j).order
		q.sql("(")
		q.str(o.OrderSn)
		q.sql(", ")
		q.str(o.UserID)
		q.sql(", ")
		q.str(string(o.Status))
		q.sql(", ")
		q.int(int64(o.Amount))
		q.sql(", ")
		q.str(o.Currency)
		q.sql(", ")
		q.str(o.Remark)
		q.sql(", ")
		q.time(o.CreatedAt)
		q.sql(", ")
		q.time(o.ExpiresAt)
		q.sql(")")
	})
	q.sql("; ")

	// Lines and events point at their order, found by its number (unique):
	// ids counted on from LAST_INSERT_ID() hold only while the server numbers
	// a multi-row insert consecutively, which MySQL 8's interleaved
	// auto-increment and a Galera cluster's auto_increment_increment do not
	// promise.
	orderID := func(j int) { // the order's id as an SQL expression
		q.sql("(SELECT id FROM orders WHERE order_sn = ")
		q.str(ticketOf(j).order.OrderSn)
		q.sql(")")
	}
	q.sql("INSERT INTO order_line (order_id, item_id, goods_id, goods_name, spec_value_str, unit_price, quantity) VALUES ")
	rows(n, func(j int) {
		l := ticketOf(j).line
		q.sql("(")
		orderID(j)
		q.sql(", ")
		q.int(l.ItemID)
		q.sql(", ")
		q.int(l.GoodsID)
		q.sql(", ")
		q.str(l.GoodsName)
		q.sql(", ")
		q.str(l.SpecValueStr)
		q.sql(", ")
		q.int(int64(l.UnitPrice))
		q.sql(", ")
		q.int(l.Quantity)
		q.sql(")")
	})
	q.sql("; ")

	// One outbox row for the batch's OrderPlaced events (placedRow).
	orders := make([]*Order, n)
	for j := range n {
		orders[j] = ticketOf(j).order
	}
	payload, events, err := placedRow(orders)
	if err != nil {
		discard(conn) // it may hold the rows locked (not begin): let the server roll back
		return fmt.Errorf("encoding %s events: %w", EventOrderPlaced, err)
	}
	q.sql("INSERT INTO outbox (event_id, type, aggregate_id, payload, created_at, events) VALUES (")
	q.str(newEventID())
	q.sql(", ")
	q.str(EventOrderPlaced)
	q.sql(", ")
	if events == 1 {
		q.sql("CAST(")
		orderID(0)
		q.sql(" AS CHAR)")
	} else {
		q.sql("''")
	}
	q.sql(", ")
	q.str(payload)
	q.sql(", ")
	q.time(now)
	q.sql(", ")
	q.int(int64(events))
	q.sql("); ")

	// Everything above needed no SKU lock; from here to COMMIT the rows are
	// held, each SKU in ascending order: its locked read, its ledger rows
	// and its CAS, all in this one trip. @c counts the CASes that held.
	var skus []int64
	for _, id := range skusOf(batch) {
		of := ofSKU(batch, won, id)
		if len(of) == 0 {
			continue // every order of this SKU was refused
		}
		skus = append(skus, id)
		q.sql("SELECT stock INTO @s FROM sku WHERE id = ")
		q.int(id)
		q.sql(" FOR UPDATE; ")
		q.sql("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, created_at) VALUES ")
		var total int64
		rows(len(of), func(j int) {
			t := batch[of[j]]
			l := t.line
			// Each order's before/after as if applied one after another.
			q.sql("(")
			q.int(id)
			q.sql(", ")
			q.int(l.GoodsID)
			q.sql(", ")
			q.int(int64(inventory.OrderDeduct))
			q.sql(", ")
			q.int(-l.Quantity)
			q.sql(", @s - ")
			q.int(total)
			q.sql(", @s - ")
			q.int(total + l.Quantity)
			q.sql(", ")
			q.str(inventory.BizOrder)
			q.sql(", ")
			q.str(t.order.OrderSn)
			q.sql(", ")
			q.time(t.order.CreatedAt)
			q.sql(")")
			total += l.Quantity
		})
		// The CAS holds only if the SKU and its goods are still what the
		// batch decided from (its read may be lastRead's): the same price,
		// names and goods, on sale. The goods row is read, not locked, as
		// the plain path reads it.
		l := batch[of[0]].line
		q.sql("; SET @g := (SELECT 1 FROM goods WHERE id = ")
		q.int(l.GoodsID)
		q.sql(" AND status = ")
		q.str(string(enums.GoodsOnShelf))
		q.sql(" AND delete_time IS NULL AND name = ")
		q.str(l.GoodsName)
		q.sql("); UPDATE sku SET stock = stock - ")
		q.int(total)
		q.sql(", version = version + 1 WHERE id = ")
		q.int(id)
		q.sql(" AND stock >= ")
		q.int(total)
		q.sql(" AND goods_id = ")
		q.int(l.GoodsID)
		q.sql(" AND sell_price = ")
		q.int(int64(l.UnitPrice))
		q.sql(" AND spec_value_str = ")
		q.str(l.SpecValueStr)
		q.sql(" AND status = ")
		q.str(string(enums.SkuEnabled))
		q.sql(" AND @g; SET @c := @c + ROW_COUNT(); ")
	}

	// COMMIT in the same trip, so the row lock is held for no network round
	// trip at all. It must not be reached when a check fails: the guard then
	// errs (a scalar subquery of two rows, error 1242; plain SQL has no
	// portable RAISE outside procedures), the server stops the statements
	// there, and the transaction is rolled back.
	//
	// A compound statement (MariaDB) has a real IF and SIGNAL, raising the
	// same error number without the subquery's optimizer work.
	if s.db.MariaDB {
		q.sql("IF NOT (")
	} else {
		q.sql("SET @ok := (SELECT 1 FROM (SELECT 1 AS x UNION ALL SELECT 2) AS t WHERE NOT (")
	}
	q.sql("@c <=> ")
	q.int(int64(len(skus)))
	if s.db.MariaDB {
		q.sql(") THEN SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 1242, MESSAGE_TEXT = 'checkout batch: a check failed before COMMIT'; END IF; ")
	} else {
		q.sql(")); ")
	}
	crash := s.at("locked") // tests: fail after the CAS and the ledger rows, before COMMIT
	if crash != nil {
		q.sql("SELECT * FROM injected_failure_before_commit; ")
	}
	q.sql("COMMIT; SET SESSION innodb_lock_wait_timeout = DEFAULT; ")

	// What the checks found, and the orders' ids.
	ids := make(map[string]int64, n)
	var cas sql.NullInt64
	q.sql("SELECT id, order_sn, @c FROM orders WHERE order_sn IN (")
	rows(n, func(j int) { q.str(ticketOf(j).order.OrderSn) })
	q.sql(")")
	scan := func(r *sql.Rows) error {
		var id int64
		var sn string
		err := r.Scan(&id, &sn, &cas)
		ids[sn] = id
		return err
	}
	if s.db.MariaDB {
		q.sql("; END")
	}

	err = queryBatch(ctx, conn, q.String(), nil, scan)
	var me *mysql.MySQLError
	if errors.As(err, &me) && ctx.Err() == nil {
		// The server stopped at an error (the guard, a lock wait, a
		// duplicate…) with the transaction open and the rows locked: roll
		// back and restore the session in one trip, reading why (user
		// variables outlive the rollback).
		derr := queryBatch(ctx, conn, "ROLLBACK; SET SESSION innodb_lock_wait_timeout = DEFAULT; SELECT @c", nil,
			func(r *sql.Rows) error { return r.Scan(&cas) })
		switch {
		case derr != nil:
			discard(conn)
			err = fmt.Errorf("%w (and rolling back: %w)", err, derr)
		case isGuard(err):
			err = nil // the checks below say which one failed
		}
	} else if err != nil {
		// Cut off (the deadline) or unreadable: whether it committed is
		// for the server to know, and this connection goes.
		discard(conn)
	}
	if crash != nil {
		return crash
	}
	switch {
	case err != nil && keysRead && isDuplicateKey(err):
		return errKeyRace
	case err != nil && isDuplicateKey(err):
		return errKeysExist
	case err != nil:
		return fmt.Errorf("writing the batch of SKUs %v: %w", skus, err)
	case cas.Int64 != int64(len(skus)):
		return errStockMoved
	}
	for j := range n {
		o := ticketOf(j).order
		if o.ID = ids[o.OrderSn]; o.ID == 0 {
			return fmt.Errorf("writing the batch of SKUs %v: order %s has no id", skus, o.OrderSn)
		}
	}
	return nil
}

// isDuplicateKey reports an idempotency key that exists (MySQL 1062 on the
// (user, key) index; the message names it, as "…idempotency_user_id_key'").
func isDuplicateKey(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062 && strings.Contains(me.Message, "idempotency_user_id_key")
}

// isGuard reports the batch's guard refusing to commit (MySQL 1242).
func isGuard(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1242
}

// queryBatch runs the multi-statement q and scans every row of its one
// result set (the final SELECT).
func queryBatch(ctx context.Context, conn querier, q string, args []any, scan func(*sql.Rows) error) error {
	rs, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	// The statements before the SELECT return no rows; their errors, if
	// any, surface while stepping over them.
	for !rs.Next() {
		if err := rs.Err(); err != nil {
			return err
		}
		if !rs.NextResultSet() {
			if err := rs.Err(); err != nil {
				return err
			}
			return errors.New("the batch query returned no result")
		}
	}
	for more := true; more; more = rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	for rs.NextResultSet() { // drain: a later error must not go unseen
	}
	return rs.Err()
}
