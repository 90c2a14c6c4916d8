package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"storefront/ent/stocklog"
	"storefront/internal/guard"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// PostgresBatch is the batch engine of PostgreSQL: every write and COMMIT
// as one simple-protocol query, so the row locks are held for no network
// round trip. Each guard fails its own statement by dividing by a count of
// zero (SQLSTATE 22012, which nothing else of a batch raises): the server
// skips every statement after it, COMMIT included, and store.Conn rolls
// the transaction back. Plain SQL has no RAISE outside a function; a
// division by a count is not a constant the planner could fold in advance.
type PostgresBatch struct{}

func (PostgresBatch) Begin(ctx context.Context, c *store.Conn) error {
	return c.BeginPostgres(ctx, pgLockTimeout(pgBudget(ctx)))
}

// LockGoods: on PostgreSQL the goods' advisory locks (store/lock.go says
// why not their rows').
func (PostgresBatch) LockGoods(ctx context.Context, c *store.Conn, goods []int64) error {
	if len(goods) == 0 {
		return nil
	}
	rs, err := c.QueryContext(ctx, store.PostgresLockSQL(store.GoodsLock, store.Shared, distinct(goods)))
	if err != nil {
		return fmt.Errorf("locking goods %v: %w", goods, err)
	}
	return rs.Close()
}

func (PostgresBatch) Write(ctx context.Context, c *store.Conn, b *Batch) (Written, error) {
	q := store.PostgresText()
	q.Grow(2048 + 900*len(b.Takes))
	budget := pgBudget(ctx)
	if b.Begin {
		q.SQL("BEGIN; ")
		if wait := pgLockTimeout(budget); wait != "" {
			q.SQL("SET LOCAL " + wait + "; ")
		}
	}
	// The goods, shared and ascending, before any other lock, then their
	// guards, read under that lock.
	if len(b.Goods) > 0 {
		ids := make([]int64, len(b.Goods))
		for i, g := range b.Goods {
			ids[i] = g.ID
		}
		q.SQL(store.PostgresLockSQL(store.GoodsLock, store.Shared, distinct(ids)))
		q.SQL("; ")
	}
	for _, g := range b.Goods {
		q.SQL("SELECT 1 / COUNT(*) FROM goods WHERE ")
		goodsOnSale(q, g)
		q.SQL("; ")
	}
	if b.Rows != nil {
		if err := b.Rows(&Rows{Text: q}); err != nil {
			return Written{}, err
		}
	}
	for i := range b.Claims {
		guard.Postgres{}.Claim(q, &b.Claims[i])
	}
	// From here to COMMIT the rows are held, each source in order; the
	// listing's flips come last (the lock order, goods_lock.go), each a
	// statement of its own: the siblings of a data-modifying WITH query see
	// the snapshot from before it, not the row it wrote.
	for i := range b.Takes {
		writeTakePostgres(q, &b.Takes[i], b.At)
	}
	for i := range b.Takes {
		if t := &b.Takes[i]; t.Pool == nil {
			listing.Postgres{}.Emptied(q, t.Moves[0].GoodsID, t.Moves[0].ItemID)
		}
	}
	// Counters of their own last, after the listing, as the plain path
	// and a close write them.
	for i := range b.Counters {
		guard.Postgres{}.Counter(q, &b.Counters[i])
	}
	var crash error
	if b.BeforeCommit != nil {
		crash = b.BeforeCommit(q)
	}
	// The server goes on after the client gives up (pgx only closes the
	// socket): past the batch's deadline its buyers have been told it
	// failed, so it must not commit. lock_timeout bounds each lock wait;
	// this bounds their sum, on the server's clock from the query's
	// arrival (statement_timestamp(): every statement of one query shares
	// it), so no clock skew matters.
	if budget > 0 {
		q.SQL(pgDeadlineCheck(budget))
	}
	q.SQL("COMMIT; ")
	if b.AfterCommit != nil {
		b.AfterCommit(q)
	}
	res, committed, err := c.SendPostgres(ctx, q.String())
	if err != nil && committed {
		// PostgreSQL's COMMIT tag is its commit (no Galera-style abort
		// after it), and the rows the caller wanted came back before it.
		slog.WarnContext(ctx, "stock batch: committed; the query failed after its COMMIT", "err", err)
		err = nil
	}
	if crash != nil {
		return Written{}, crash
	}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "22012":
		return Written{}, ErrMoved
	case err != nil:
		return Written{}, err
	case !committed:
		return Written{}, errors.New("stock batch: the query ended without its COMMIT")
	}
	return Written{Results: res}, nil
}

// RefusedData: the server refused a value of a row (class 22, data
// exception: 22021 an invalid byte sequence, 22001 a value too long, …; and
// 54000, chr(0)'s "null character not permitted", which is how a NUL goes
// in the batch's text, store.PostgresText) or a constraint on one (class 23:
// a duplicate order number, a foreign key, a check). Not the batch's own
// failures spelt in class 22: a guard's 22012 (ErrMoved) and the deadline
// check's 22P02 (pgDeadlineCheck): past its deadline the batch is over for
// every buyer.
func (PostgresBatch) RefusedData(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch {
	case pe.Code == "22012", pe.Code == "22P02":
		return false
	case pe.Code == "54000":
		return true
	}
	return strings.HasPrefix(pe.Code, "22") || strings.HasPrefix(pe.Code, "23")
}

// writeTakePostgres renders one source's take as one statement: the CAS
// for the total (skuCAS, or poolCAS with the goods and SKU guards) returns
// the row it moved, the ledger rows are chained from that balance in the
// same statement (none when lock), and the statement is its own guard.
// A pool's counter follows as a statement of its own: the order of a
// statement's data-modifying WITH queries is the server's, and the lock
// order is the pool's row, then its counters.
func writeTakePostgres(q *store.Text, t *Take, at time.Time) {
	total, goods := t.total(), t.Moves[0].GoodsID
	if t.Pool == nil {
		q.SQL("WITH s AS (")
		skuCAS{id: t.Moves[0].ItemID, n: total, floor: total, lock: t.Lock, goods: goods, terms: &t.Terms}.write(q)
	} else {
		q.SQL("WITH s AS (")
		poolCAS(q, t.Pool, t.Terms.Price, total, t.Lock, at)
		q.SQL(" AND EXISTS (SELECT 1 FROM goods WHERE ")
		goodsOnSale(q, guardOf(t))
		q.SQL(") AND EXISTS (SELECT 1 FROM sku WHERE id = ")
		q.Int(t.Pool.ItemID)
		q.SQL(" AND ")
		skuSold(q, goods, t.Terms.SpecText)
		q.SQL(")")
	}
	q.SQL(" RETURNING stock)")
	if !t.Lock {
		chainPostgres(q, "s", t.Moves, total)
	}
	q.SQL(" SELECT 1 / COUNT(*) FROM s; ")
	if t.Pool != nil {
		c := t.counter()
		guard.Postgres{}.Counter(q, &c)
	}
}

// pgBudget is the time ctx leaves the batch (0: no deadline), in whole
// milliseconds, at least one.
func pgBudget(ctx context.Context) time.Duration {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return max(time.Until(dl).Truncate(time.Millisecond), time.Millisecond)
}

// pgLockTimeout is the SET LOCAL item that bounds each lock wait of the
// transaction by budget ("" without one; lock_timeout 0 would mean none).
func pgLockTimeout(budget time.Duration) string {
	if budget <= 0 {
		return ""
	}
	return "lock_timeout = '" + strconv.FormatInt(budget.Milliseconds(), 10) + "ms'"
}

// pgDeadlineCheck is the statement that fails unless the query has run on
// the server for less than budget. It fails by casting text to an integer
// (22P02: not the guards' 22012, so it is no ErrMoved to run again), of a
// value made from clock_timestamp() so that the planner cannot fold it into
// a constant and raise it whatever the condition says.
func pgDeadlineCheck(budget time.Duration) string {
	return "SELECT CASE WHEN clock_timestamp() - statement_timestamp() < INTERVAL '" +
		strconv.FormatInt(budget.Milliseconds(), 10) + " milliseconds' THEN 1 " +
		"ELSE ('stock batch past its deadline' || left(clock_timestamp()::text, 0))::int END; "
}

// chainPostgres renders, as a WITH query (", l AS (…)") of the statement
// whose query from returned stock, the ledger rows of moves chained from
// the balance before a CAS that took total: each row's before and after as
// if they were applied one after another from stock + total, the balance
// the CAS found under the row lock. No row is written when the CAS did not
// hold (from is then empty).
func chainPostgres(q *store.Text, from string, moves []Movement, total int64) {
	q.SQL(", l AS (")
	left := total // what the movements from j on take
	q.InsertSelect(stocklog.Table, len(moves), from, func(j int, v store.Values) {
		m := &moves[j]
		// left and left + m.Num are never negative: no "- -", which SQL
		// reads as a comment.
		m.write(v, from+".stock + "+itoa(left), from+".stock + "+itoa(left+m.Num))
		left += m.Num
	})
	q.SQL(")")
}
