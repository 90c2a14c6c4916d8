package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
)

// postgresWriter is the batch's writer on PostgreSQL (serverBatcher does
// the rest): every write and COMMIT as one simple-protocol query, so the
// row locks are held for no network round trip.
type postgresWriter struct {
	commitHooks
}

// begin: a rerun's transaction, its lock waits bounded as the batch's
// query bounds its own.
func (b *postgresWriter) begin(ctx context.Context, c *store.Conn) error {
	return c.BeginPostgres(ctx, pgLockTimeout(pgBudget(ctx)))
}

func (b *postgresWriter) lockGoods(ctx context.Context, c *store.Conn, goods []int64) error {
	return inventory.LockGoodsPostgres(ctx, c, goods)
}

// write writes the decided orders of batch (won, in arrival order) and
// commits them in one round trip on c: one query of many statements, which
// the server runs in order and stops at the first error. It opens the
// transaction (begin; otherwise it is open, with the rows locked) and bounds
// its lock waits, takes the goods' shared locks and checks the goods, inserts
// the idempotency records, the orders (returning their ids), lines and
// OrderPlaced events, then per source (SKUs ascending, then pools) takes the
// total by CAS with the ledger rows chained from the row it moved
// (inventory.WriteTakesPostgres), flips the listing of goods it emptied,
// and commits unless a check failed: each
// check fails its own statement (division_by_zero), the server skips the
// rest, COMMIT included, and store.Conn rolls the transaction back.
//
// Why one round trip: as on MySQL (batch_mysql.go), the batch is the unit
// of throughput on a hot SKU, and the row lock is held from the CAS to
// COMMIT: with the statements in one query that is the server's time alone.
func (b *postgresWriter) write(ctx context.Context, s *Service, c *store.Conn, batch []*ticket, d decision, now time.Time, begin bool) error {
	won, keysRead := d.won, d.keysRead
	q := store.PostgresText()
	q.Grow(2048 + 900*len(won))
	ticketOf := func(j int) *ticket { return batch[won[j]] }
	n := len(won)
	placed := make([]*Order, n)
	for j := range n {
		placed[j] = ticketOf(j).order
	}

	budget := pgBudget(ctx)
	if begin {
		q.SQL("BEGIN; ")
		if wait := pgLockTimeout(budget); wait != "" {
			q.SQL("SET LOCAL " + wait + "; ")
		}
	}
	// The goods of the batch's SKUs, shared and in ascending id, before
	// any other lock (internal/inventory/goods_lock.go), then what the batch decided
	// of them, read under that lock.
	sold := goodsSold(batch, won)
	inventory.WriteGoodsLocksPostgres(q, sold.ids)
	for _, g := range sold.ids {
		inventory.WriteGoodsCheckPostgres(q, g, sold.terms[g], sold.lock[g])
	}
	// The orders say their ids: the one INSERT of the query that returns
	// rows.
	if err := s.writeOrders(q, batch, won, placed, now, " RETURNING id, order_sn", linesEach); err != nil {
		return err // an open transaction (not begin) is rolled back by store.Conn
	}

	// Everything above needed no stock lock; from here to COMMIT the rows
	// are held, each source in order.
	var skus []source
	var taken [][]inventory.Movement // of each SKU, for the listing
	for _, src := range sourcesOf(batch) {
		of := ofSource(batch, won, src)
		if len(of) == 0 {
			continue // every order of this source was refused
		}
		skus = append(skus, src)
		first := sale(batch[of[0]].order, &batch[of[0]].line.OrderLine)
		if src.pool != 0 {
			inventory.WritePoolTakesPostgres(q, d.pools.pools[src.pool], first.Terms, movements(batch, of), buyersOf(batch, of), first.Lock, now)
			continue
		}
		moves := movements(batch, of)
		inventory.WriteTakesPostgres(q, first.Terms, moves, first.Lock)
		taken = append(taken, moves)
	}
	for _, moves := range taken {
		inventory.WriteEmptiedPostgres(q, moves)
	}
	var crash error
	if b.beforeCommit != nil {
		crash = b.beforeCommit(q)
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
	if b.afterCommit != nil {
		b.afterCommit(q)
	}

	res, committed, err := c.SendPostgres(ctx, q.String())
	if err != nil && committed {
		// PostgreSQL's COMMIT tag is its commit (no Galera-style abort
		// after it, commit_readback_mysql.go), and the orders' ids came
		// back before it: the buyers get their orders.
		slog.WarnContext(ctx, "checkout batch: committed; the query failed after its COMMIT", "orders", n, "err", err)
		err = nil
	}
	if crash != nil {
		return crash
	}
	switch {
	case isGuardPostgres(err):
		return errStockMoved
	case err != nil && keysRead && store.IsDuplicateOf(err, "idempotency_user_id_key"):
		return errKeyRace
	case err != nil && store.IsDuplicateOf(err, "idempotency_user_id_key"):
		return errKeysExist
	case err != nil:
		return fmt.Errorf("writing the batch of SKUs %v: %w", skus, err)
	case !committed:
		return fmt.Errorf("writing the batch of SKUs %v: the query ended without its COMMIT", skus)
	}
	ids := make(map[string]int64, n)
	for _, r := range res {
		if !strings.HasPrefix(r.Tag, "INSERT") || len(r.Rows) == 0 {
			continue
		}
		for _, row := range r.Rows {
			id, err := strconv.ParseInt(row[0], 10, 64)
			if err != nil {
				return fmt.Errorf("%w: the batch committed, reading its order ids failed: %w", store.ErrCommitUnknown, err)
			}
			ids[row[1]] = id
		}
	}
	for j := range n {
		o := ticketOf(j).order
		if o.ID = ids[o.OrderSn]; o.ID == 0 {
			return fmt.Errorf("%w: the batch committed, order %s came back without its id", store.ErrCommitUnknown, o.OrderSn)
		}
	}
	return nil
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

// pgLockTimeout is the SET LOCAL that bounds each lock wait of the
// transaction by budget ("" without one; lock_timeout 0 would mean none).
func pgLockTimeout(budget time.Duration) string {
	if budget <= 0 {
		return ""
	}
	return "lock_timeout = '" + strconv.FormatInt(budget.Milliseconds(), 10) + "ms'"
}

// pgDeadlineCheck is the statement that fails unless the query has run on
// the server for less than budget. It fails by casting text to an integer
// (22P02: not the guards' 22012, so it is no errStockMoved to run again),
// of a value made from clock_timestamp() so that the planner cannot fold it
// into a constant and raise it whatever the condition says.
func pgDeadlineCheck(budget time.Duration) string {
	return "SELECT CASE WHEN clock_timestamp() - statement_timestamp() < INTERVAL '" +
		strconv.FormatInt(budget.Milliseconds(), 10) + " milliseconds' THEN 1 " +
		"ELSE ('checkout batch past its deadline' || left(clock_timestamp()::text, 0))::int END; "
}

// refusedData: the server refused a value of a row (class 22, data
// exception: 22021 an invalid byte sequence, 22001 a value too long, …; and
// 54000, chr(0)'s "null character not permitted", which is how a NUL goes
// in the batch's text, store.PostgresText) or a constraint on one (class 23:
// a duplicate order number, a foreign key, a check). Not the batch's own
// failures spelt in class 22: a guard's 22012 (errStockMoved) and the
// deadline check's 22P02 (pgDeadlineCheck): past its deadline the batch is
// over for every buyer.
func (b *postgresWriter) refusedData(err error) bool {
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

// isGuardPostgres reports a check of the batch refusing to commit: its
// statement divided by a count of zero (22012; see
// inventory.WriteTakesPostgres).
func isGuardPostgres(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "22012"
}
