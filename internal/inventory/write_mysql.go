package inventory

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-sql-driver/mysql"

	"storefront/ent/stocklog"
	"storefront/internal/guard"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// MySQLBatch is the batch engine of MySQL and MariaDB: every write and
// COMMIT in one query, which checks under the row locks what the batch
// decided from. Its statement's user variables are its own: @c counts the
// guards that held, @s and @l a source's balance read under its lock, @g…
// a goods guard, @ln the rows Rows counted, @done that COMMIT ran.
//
// On MariaDB (Compound) the statements go as one anonymous compound
// statement (BEGIN NOT ATOMIC … END): as separate statements of a
// multi-statement query each sends its own OK packet, and those sends (a
// syscall each, and a wake-up of the client) measured 11.5 % of the
// server's CPU at 19 packets a batch. It has a real IF and SIGNAL too.
type MySQLBatch struct{ Compound bool }

// shareLockMySQL: store's ShareClause, spelled where a statement is
// written as text (MariaDB 10.11 has no FOR SHARE).
const shareLockMySQL = "LOCK IN SHARE MODE"

func (e MySQLBatch) Begin(ctx context.Context, c *store.Conn) error {
	return c.Begin(ctx, lockWait(ctx))
}

func (e MySQLBatch) LockGoods(ctx context.Context, c *store.Conn, goods []int64) error {
	if len(goods) == 0 {
		return nil
	}
	args := anyIDs(distinct(goods))
	_, err := readIDs(ctx, c, "SELECT id FROM goods WHERE id IN ("+store.Marks(len(args))+") ORDER BY id "+shareLockMySQL, args)
	return err
}

// Write: the server runs the statements in order and stops at the first
// error; the transaction is then rolled back in one more trip. Statement by
// statement a batch took ten round trips for what the server does in a
// fraction of one (docs/benchmarks.md).
func (e MySQLBatch) Write(ctx context.Context, c *store.Conn, b *Batch) (Written, error) {
	q := store.MySQLText(e.Compound)
	q.Grow(2048 + 800*len(b.Takes)) // ~780 bytes an order on the demo catalog
	if q.Compound {
		q.SQL("BEGIN NOT ATOMIC ")
	}
	if b.Begin {
		q.SQL("START TRANSACTION; ")
	}
	// @done turns 1 only once COMMIT has run: a server error after it (a
	// final SELECT) must not be taken for a rolled-back batch.
	q.SQL("SET @s := NULL, @c := 0, @done := 0, @ln := 0")
	if wait := lockWait(ctx); wait != "" {
		q.SQL(", ")
		q.SQL(wait)
	}
	q.SQL("; ")
	// The goods, shared and ascending, before any other lock: a batch
	// waiting for one (behind an admin's edit) holds nothing, and a batch
	// holding one never waits for an edit.
	for _, g := range b.Goods {
		writeGoodsLockMySQL(q, g)
	}
	rows := &Rows{Text: q, count: "SET @ln := @ln + ROW_COUNT(); "}
	if b.Rows != nil {
		if err := b.Rows(rows); err != nil {
			return Written{}, err
		}
	}
	// From here to COMMIT the rows are held: the claims', then each source
	// in order: its locked read, its ledger rows and its CAS (and its
	// counters).
	checks := 0
	for i := range b.Claims {
		countMySQL(q, guard.MySQL{}.Claim(q, &b.Claims[i]))
		checks++
	}
	for i := range b.Takes {
		checks += writeTakeMySQL(q, &b.Takes[i], b.At)
	}
	for i := range b.Counters {
		countMySQL(q, guard.MySQL{}.Counter(q, &b.Counters[i]))
		checks++
	}
	// COMMIT in the same trip, so the row locks are held for no network
	// round trip. It must not be reached when a guard failed: the guard
	// then errs (a scalar subquery of two rows, error 1242; plain SQL has
	// no portable RAISE outside procedures), the server stops there, and
	// the transaction is rolled back. A compound statement raises the same
	// error number with SIGNAL, without the subquery's optimizer work.
	if q.Compound {
		q.SQL("IF NOT (@c <=> ")
		q.Int(int64(checks))
		if b.Expect > 0 {
			q.SQL(" AND @ln <=> ")
			q.Int(b.Expect)
		}
		q.SQL(") THEN SIGNAL SQLSTATE '45000' SET MYSQL_ERRNO = 1242, MESSAGE_TEXT = 'stock batch: a guard failed before COMMIT'; END IF; ")
	} else {
		q.SQL("SET @ok := (SELECT 1 FROM (SELECT 1 AS x UNION ALL SELECT 2) AS t WHERE NOT (@c <=> ")
		q.Int(int64(checks))
		q.SQL(")); ")
	}
	var crash error
	if b.BeforeCommit != nil {
		crash = b.BeforeCommit(q)
	}
	q.SQL("COMMIT; SET @done := 1; ")
	if b.AfterCommit != nil {
		b.AfterCommit(q)
	}
	q.SQL("SET SESSION innodb_lock_wait_timeout = DEFAULT; ")
	scan := b.Scan
	switch {
	case b.Returned != nil:
		b.Returned(rows)
	case scan == nil:
		// The query answers with a result set, read to its end: a batch
		// that wants no rows gets one it ignores.
		q.SQL("SELECT 1; ")
		scan = func(*sql.Rows) error { return nil }
	}
	if q.Compound {
		q.SQL("END")
	}
	// A server error stops the statements with the transaction open:
	// store.Conn rolls it back and restores the session in one more trip,
	// reading the guards' count (user variables outlive the rollback).
	var held, done, counted sql.NullInt64
	err := c.Send(ctx, q.String(), scan, "SET SESSION innodb_lock_wait_timeout = DEFAULT; SELECT @c, @done, @ln",
		func(r *sql.Rows) error { return r.Scan(&held, &done, &counted) })
	if err != nil && done.Int64 == 1 {
		return Written{PastCommit: true}, err
	}
	if crash != nil {
		return Written{}, crash
	}
	var me *mysql.MySQLError
	switch {
	case errors.As(err, &me) && me.Number == 1242 && held.Int64 != int64(checks):
		return Written{}, ErrMoved
	case errors.As(err, &me) && me.Number == 1242:
		// Not a guard of stock: a counted statement wrote fewer rows than
		// expected (a line found no order: it cannot, short of a bug), and
		// nothing was committed.
		return Written{}, fmt.Errorf("stock batch: %d of %d counted rows written", counted.Int64, b.Expect)
	}
	return Written{}, err
}

// RefusedData: the server refused a value of a row (1048 NULL, 1264 and
// 1690 out of range, 1265 truncated, 1292 and 1366 incorrect value, 1300
// invalid utf8mb4, 1406 too long) or a constraint on one (1062 duplicate,
// 1451 and 1452 foreign key, 3819 and 4025 check). The guard's 1242 never
// reaches here (ErrMoved), nor a duplicate the caller recognises as its own.
func (MySQLBatch) RefusedData(err error) bool {
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

// lockWait is the SET item that bounds the session's lock waits by ctx's
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

// goodsVar is the user variable writeGoodsLockMySQL sets for goods.
func goodsVar(goods int64) string { return "@g" + itoa(goods) }

// writeGoodsLockMySQL sets @g<goods id> to whether the goods guard holds,
// read under the shared goods lock: COUNT(*) always yields a row, so the
// variable is 0 when the goods changed; the row is read by its id, so it
// is locked whatever it holds.
func writeGoodsLockMySQL(q *store.Text, g GoodsOnSale) {
	q.SQL("SELECT COUNT(*) INTO " + goodsVar(g.ID) + " FROM goods WHERE ")
	goodsOnSale(q, g)
	q.SQL(" " + shareLockMySQL + "; ")
}

// writeTakeMySQL renders one source's take and returns how many guards it
// added to @c.
func writeTakeMySQL(q *store.Text, t *Take, at time.Time) int {
	if t.Pool != nil {
		return writePoolTakeMySQL(q, t, at)
	}
	// The locked read of the balance into @s and @l, one ledger row each
	// chained from it, and one CAS for the total (skuCAS) that holds only
	// on the terms read and while the goods guard held.
	id, goods := t.Moves[0].ItemID, t.Moves[0].GoodsID
	q.SQL("SELECT stock, lock_stock INTO @s, @l FROM sku WHERE id = ")
	q.Int(id)
	q.SQL(" FOR UPDATE; ")
	total := t.total()
	if !t.Lock {
		writeChainMySQL(q, t.Moves)
	}
	skuCAS{id: id, n: total, floor: total, lock: t.Lock, goods: goods, terms: &t.Terms}.write(q)
	q.SQL(" AND " + goodsVar(goods) + "; SET @c := @c + ROW_COUNT(); ")
	listing.MySQL{}.Emptied(q, goods, func(q *store.Text) { q.SQL("@s - @l - " + itoa(total) + " <= 0") })
	return 1
}

// writeChainMySQL books moves (of one balance, in booking order), each
// row's before and after as if applied one after another from @s, the
// balance read under the lock.
func writeChainMySQL(q *store.Text, moves []Movement) {
	var taken int64
	q.Insert(stocklog.Table, len(moves), func(j int, v store.Values) {
		m := &moves[j]
		m.write(v, "@s - "+itoa(taken), "@s - "+itoa(taken-m.Num))
		taken -= m.Num
	})
	q.SQL("; ")
}

// writePoolTakeMySQL renders a pool's take: the locked read of the pool's
// balance, the ledger rows chained from it (none when lock), the pool's
// CAS, which holds only while the goods and the SKU are still sold as read
// (plain reads: a pool sale takes no SKU row, so it needs no goods lock;
// a batch may decide from lastRead's memory, which only these clear), and
// its buyers' counter.
func writePoolTakeMySQL(q *store.Text, t *Take, at time.Time) int {
	p, goods := t.Pool, t.Moves[0].GoodsID
	q.SQL("SELECT stock INTO @s FROM stock_pool WHERE id = ")
	q.Int(p.ID)
	q.SQL(" FOR UPDATE; ")
	if !t.Lock {
		writeChainMySQL(q, t.Moves)
	}
	q.SQL("SET @g := (SELECT 1 FROM goods WHERE ")
	goodsOnSale(q, guardOf(t))
	q.SQL("); SET @k := (SELECT 1 FROM sku WHERE id = ")
	q.Int(p.ItemID)
	q.SQL(" AND ")
	skuSold(q, goods, t.Terms.SpecText)
	q.SQL("); ")
	poolCAS(q, p, t.Terms.Price, t.total(), t.Lock, at)
	q.SQL(" AND @g AND @k; SET @c := @c + ROW_COUNT(); ")
	c := t.counter()
	countMySQL(q, guard.MySQL{}.Counter(q, &c))
	return 2
}

// countMySQL counts in @c whether the guard just written held.
func countMySQL(q *store.Text, held guard.Held) {
	q.SQL("SET @c := @c + (")
	held(q)
	q.SQL("); ")
}
