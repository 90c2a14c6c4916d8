package checkout

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/ent/orderline"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// mysqlWriter is the batch's writer on MySQL and MariaDB (serverBatcher
// does the rest): every write and COMMIT in one round trip (write), which
// checks under the row lock what the batch decided from.
type mysqlWriter struct {
	// compound: the server runs anonymous compound statements (MariaDB).
	compound bool
	// beforeCommit, afterCommit: see commitHooks.
	commitHooks
}

// begin: a rerun's transaction, its lock waits bounded as the batch's
// statement bounds its own.
func (b *mysqlWriter) begin(ctx context.Context, c *store.Conn) error {
	return c.Begin(ctx, lockWait(ctx))
}

func (b *mysqlWriter) lockGoods(ctx context.Context, c *store.Conn, goods []int64) error {
	return inventory.LockGoodsMySQL(ctx, c, goods)
}

// write writes the decided orders of batch (won, in arrival order) and
// commits them in one round trip on c: a query that opens the transaction
// (begin; otherwise it is open, with the rows locked), inserts
// the idempotency records, orders, lines and OrderPlaced events, then per
// SKU locks the row, books one ledger row per order from the locked balance
// and takes the SKU's total by CAS, then commits unless a check failed. It
// returns with the transaction ended, or with c's state unknown (store.Conn
// then discards it).
//
// Why one round trip: on a hot SKU the batch is the unit of throughput, and
// statement by statement it took ten round trips for what the server does in
// a fraction of one (docs/benchmarks.md). The server runs the statements in order and stops at
// the first error; the transaction is then rolled back in one more trip.
//
// On MariaDB the statements go as one anonymous compound statement (BEGIN
// NOT ATOMIC … END): as separate statements of a multi-statement query each
// sends its own OK packet, and those sends (a syscall each, and a wake-up of
// the client) measured 11.5 % of the server's CPU at 19 packets a batch.
func (b *mysqlWriter) write(ctx context.Context, s *Service, c *store.Conn, batch []*ticket, d decision, now time.Time, begin bool) error {
	won, keysRead := d.won, d.keysRead
	q := store.MySQLText(b.compound)
	q.Grow(2048 + 800*len(won)) // ~780 bytes an order on the demo catalog
	ticketOf := func(j int) *ticket { return batch[won[j]] }
	n := len(won)
	placed := make([]*Order, n)
	for j := range n {
		placed[j] = ticketOf(j).order
	}

	if q.Compound {
		q.SQL("BEGIN NOT ATOMIC ")
	}
	if begin {
		q.SQL("START TRANSACTION; ")
	}
	// @done turns 1 only once COMMIT has run: a server error after it (the
	// final SELECT) must not be taken for a rolled-back batch.
	q.SQL("SET ")
	inventory.WriteChecksReset(q)
	q.SQL(", @done := 0, @ln := 0")
	if wait := lockWait(ctx); wait != "" {
		q.SQL(", ")
		q.SQL(wait)
	}
	q.SQL("; ")
	// The goods of the batch's SKUs, shared and in ascending id, before
	// any other lock: the first lock of every stock-moving transaction
	// (internal/inventory/goods_lock.go), so that a batch waiting for it (behind an
	// admin's edit) holds nothing, and a batch holding it never waits for
	// an edit.
	sold := goodsSold(batch, won)
	for _, g := range sold.ids {
		inventory.WriteGoodsLock(q, g, sold.terms[g], sold.lock[g])
	}
	// MariaDB's orders say their ids as they are inserted (the rows come
	// back before COMMIT, read only once the statement ran to its end);
	// MySQL has no RETURNING, and a SELECT after COMMIT finds them by number.
	returning, writeLines := "", linesEach
	if q.Compound {
		returning, writeLines = " RETURNING id, order_sn", linesByTerms
	}
	if err := s.writeOrders(q, batch, won, placed, now, returning, writeLines); err != nil {
		return err // an open transaction (not begin) is rolled back by store.Conn
	}

	// Everything above needed no stock lock; from here to COMMIT the rows
	// are held, each source in order (SKUs ascending, then pools
	// ascending): its locked read, its ledger rows and its CAS (and a
	// pool's buyer counters), all in this one trip. @c counts the checks
	// that held.
	var skus []source
	checks := 0
	for _, src := range sourcesOf(batch) {
		of := ofSource(batch, won, src)
		if len(of) == 0 {
			continue // every order of this source was refused
		}
		skus = append(skus, src)
		// The CAS holds only if the SKU (or pool) and its goods are still
		// what the batch decided from (its read may be lastRead's).
		first := sale(batch[of[0]].order, &batch[of[0]].line.OrderLine)
		if src.pool != 0 {
			checks += inventory.WritePoolTakes(q, d.pools.pools[src.pool], first.Terms, movements(batch, of), buyersOf(batch, of), first.Lock, now)
			continue
		}
		inventory.WriteTakes(q, first.Terms, movements(batch, of), first.Lock)
		checks++
	}

	// COMMIT in the same trip, so the row lock is held for no network round
	// trip at all. It must not be reached when a check fails: the guard then
	// errs (a scalar subquery of two rows, error 1242; plain SQL has no
	// portable RAISE outside procedures), the server stops the statements
	// there, and the transaction is rolled back.
	//
	// A compound statement (MariaDB) has a real IF and SIGNAL, raising the
	// same error number without the subquery's optimizer work.
	if q.Compound {
		q.SQL("IF NOT (")
	} else {
		q.SQL("SET @ok := (SELECT 1 FROM (SELECT 1 AS x UNION ALL SELECT 2) AS t WHERE NOT (")
	}
	inventory.WriteChecksHeld(q)
	q.SQL(" <=> ")
	q.Int(int64(checks))
	if q.Compound {
		q.SQL(" AND @ln <=> ")
		q.Int(int64(n))
		q.SQL(") THEN SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 1242, MESSAGE_TEXT = 'checkout batch: a check failed before COMMIT'; END IF; ")
	} else {
		q.SQL(")); ")
	}
	var crash error
	if b.beforeCommit != nil {
		crash = b.beforeCommit(q)
	}
	q.SQL("COMMIT; SET @done := 1; ")
	if b.afterCommit != nil {
		b.afterCommit(q)
	}
	q.SQL("SET SESSION innodb_lock_wait_timeout = DEFAULT; ")

	// The orders' ids (a statement that ran to its end passed the guard:
	// every check held).
	ids := make(map[string]int64, n)
	var cas, done, lines sql.NullInt64
	if q.Compound {
		q.SQL("END")
	} else {
		q.SQL("SELECT id, order_sn FROM orders WHERE order_sn IN (")
		for j, o := range placed {
			if j > 0 {
				q.SQL(", ")
			}
			q.Str(o.OrderSn)
		}
		q.SQL(")")
	}
	scan := func(r *sql.Rows) error {
		var id int64
		var sn string
		err := r.Scan(&id, &sn)
		ids[sn] = id
		return err
	}

	// A server error stops the statements with the transaction open:
	// store.Conn rolls it back and restores the session in one more trip,
	// reading the checks' count (user variables outlive the rollback) to
	// say which check failed.
	after := store.MySQLText(false)
	after.SQL("SET SESSION innodb_lock_wait_timeout = DEFAULT; SELECT ")
	inventory.WriteChecksHeld(after)
	after.SQL(", @done, @ln")
	err := c.Send(ctx, q.String(), scan, after.String(), func(r *sql.Rows) error { return r.Scan(&cas, &done, &lines) })
	if err != nil && done.Int64 == 1 {
		// Past COMMIT, then an error: on Galera not proof of a commit
		// (readBack says why), so the orders are read back.
		return readBack(ctx, c, placed, err)
	}
	guard := isGuard(err)
	if guard {
		err = nil // the checks below say which one failed
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
	case guard && cas.Int64 != int64(checks):
		return errStockMoved
	case guard:
		// Not for stock: a line found no order (it cannot, short of a
		// bug), and nothing was committed.
		return fmt.Errorf("writing the batch of SKUs %v: %d of %d lines found their order", skus, lines.Int64, n)
	}
	for j := range n {
		o := ticketOf(j).order
		if o.ID = ids[o.OrderSn]; o.ID == 0 {
			return fmt.Errorf("writing the batch of SKUs %v: order %s has no id", skus, o.OrderSn)
		}
	}
	return nil
}

// lockWait is the statement that bounds the session's lock waits by ctx's
// deadline ("" without one). The server goes on after the client gives up
// (the driver only closes the socket), so a lock wait must not outlast the
// batch's deadline by more than the second InnoDB counts in: otherwise the
// batch could commit long after its buyers were told UNAVAILABLE.
func lockWait(ctx context.Context) string {
	dl, ok := ctx.Deadline()
	if !ok {
		return ""
	}
	secs := int64(math.Ceil(time.Until(dl).Seconds()))
	return "SESSION innodb_lock_wait_timeout = " + strconv.FormatInt(min(max(secs, 1), 50), 10)
}

// isDuplicateKey reports an idempotency key that exists (MySQL 1062 on the
// (user, key) index; the message names it, as "…idempotency_user_id_key'").
func isDuplicateKey(err error) bool {
	var me *mysql.MySQLError
	return store.IsDuplicate(err) && errors.As(err, &me) && strings.Contains(me.Message, "idempotency_user_id_key")
}

// refusedData: the server refused a value of a row (1048 NULL, 1264 and
// 1690 out of range, 1265 truncated, 1292 and 1366 incorrect value, 1300
// invalid utf8mb4, 1406 too long) or a constraint on one (1062 duplicate,
// 1451 and 1452 foreign key, 3819 and 4025 check). 1062 of an idempotency
// key never reaches here (errKeysExist, errKeyRace), nor the guard's 1242
// (errStockMoved).
func (b *mysqlWriter) refusedData(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	switch me.Number {
	case 1048, 1264, 1690, 1265, 1292, 1366, 1300, 1406, 1062, 1451, 1452, 3819, 4025:
		return true
	}
	return false
}

// isGuard reports the batch's guard refusing to commit (MySQL 1242).
func isGuard(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1242
}

// linesByTerms writes the batch's lines as one INSERT per distinct line
// (every column but the order's id the same: on a hot SKU, the whole batch),
// the orders' ids found by number, each by the unique index:
//
//	INSERT INTO order_line (order_id, item_id, …) WITH v (sn) AS (VALUES ('…'), …)
//	SELECT STRAIGHT_JOIN o.id, 3, 1, … FROM v JOIN orders o ON o.order_sn = v.sn
//
// Row by row, each line found its order with a subquery of its own
// ((SELECT id FROM orders WHERE order_sn = …), orderRef) and repeated its
// goods name, spec text, price and mode: ~170 bytes and a subquery per
// order, about a quarter of MariaDB's CPU per order on a hot SKU. The join
// is driven by the numbers (STRAIGHT_JOIN, eq_ref on orders.order_sn): an
// IN list let the optimizer scan the whole index on a small table, and that
// scan's shared locks waited on another batch's uncommitted orders while it
// held order_line's AUTO-INC lock, which that batch then waited for (a
// deadlock, reported as error 1467). @ln counts the lines written; the guard
// holds only if every order got its line. MariaDB only (its VALUES; the
// statement is the compound one). Groups of fewer than four lines on average
// go row by row instead (a 16-SKU batch: not measured to lose or win, kept
// as main wrote it).
func linesByTerms(q *store.Text, batch []*ticket, won []int, placed []*Order) {
	type group struct {
		line *OrderLine
		sns  *store.Text
	}
	var groups []*group
	byTerms := map[string]*group{}
	for j, o := range placed {
		l := &batch[won[j]].line.OrderLine
		terms := store.MySQLText(false)
		terms.Insert(orderline.Table, 1, func(_ int, v store.Values) { l.writeTerms(v) })
		key := terms.String()
		g := byTerms[key]
		if g == nil {
			g = &group{line: l, sns: store.MySQLText(false)}
			g.sns.SQL("WITH v (sn) AS (VALUES (")
			byTerms[key] = g
			groups = append(groups, g)
		} else {
			g.sns.SQL("), (")
		}
		g.sns.Str(o.OrderSn)
	}
	if len(groups)*4 > len(placed) {
		// Mostly lines of their own (orders spread over many SKUs): a
		// statement per group would cost more than the subqueries it saves,
		// so the lines go row by row, as on MySQL.
		linesEach(q, batch, won, placed)
		q.SQL("SET @ln := ROW_COUNT(); ")
		return
	}
	for _, g := range groups {
		g.sns.SQL(")) SELECT STRAIGHT_JOIN")
		q.InsertQuery(orderline.Table, g.sns.String(), "FROM v JOIN orders o ON o.order_sn = v.sn", func(v store.Values) {
			v.Raw(orderline.FieldOrderID, "o.id")
			g.line.writeTerms(v)
		})
		q.SQL("; SET @ln := @ln + ROW_COUNT(); ")
	}
}
