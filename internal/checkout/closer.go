package checkout

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// The timeout closer. Deduct-at-order holds stock from the order on, so an
// unpaid order must be closed soon after its TTL or it holds the stock from
// buyers who would pay (seed 003, 5.1). Every instance runs it, so it must
// keep up with the checkout of all of them together:
//
//   - it closes claimSize orders per transaction (one commit, one fsync,
//     for many orders), each moved from UNPAID under the claim's lock
//     (closeLocked);
//   - the closers of several instances split the work: a claim passes over
//     the orders another closer holds (store.ClaimLock, FOR UPDATE SKIP
//     LOCKED) instead of waiting for them and then finding them closed;
//   - one order that cannot be closed costs only itself: a claim that fails
//     after its retries is closed again one order per transaction, and an
//     order that still fails is logged with its cause and left for the next
//     pass, which goes on with the orders after it.

// claimSize is the most orders one transaction of the closer closes: 32 of
// them close 9–16× as fast as one a transaction on MariaDB and PostgreSQL
// (docs/benchmarks.md, "the timeout closer beside checkout"): about
// twenty statements and one commit for all of them. A hot SKU's row is
// held from the claim's locking read of it to the commit, a few statements.
const claimSize = 32

// CloseExpired closes every UNPAID order older than the order TTL, reading
// them in pages of CloseBatch ids (ascending) and closing each page in
// claims of claimSize orders per transaction. Several closers may run at
// once: each order is closed, and its stock restored, once. It returns how
// many orders this call closed. An order that could not be closed is logged
// and left for the next pass; the error is only the database's, when the
// pass could not go on (it could not read the expired orders, it is gone,
// or ctx ended).
func (s *Service) CloseExpired(ctx context.Context) (int, error) {
	cutoff := s.now().Add(-s.cfg.OrderTTL)
	var p pass
	var after int64
	for {
		// By id after the last page, not from the start again: an order
		// this pass could not close must not be read again, and again.
		ids, err := s.db.Client.Order.Query().
			Where(order.StatusEQ(enums.OrderUnpaid), order.CreatedAtLT(cutoff), order.IDGT(after)).
			Order(order.ByID()).Limit(s.cfg.CloseBatch).IDs(ctx)
		if err != nil {
			return p.closed, store.Classify(fmt.Errorf("finding expired orders: %w", err))
		}
		closing, err := s.settled(ctx, ids)
		if err != nil {
			return p.closed, err
		}
		for start := 0; start < len(closing); start += s.claimMax {
			if err := s.closeClaims(ctx, cutoff, closing[start:min(start+s.claimMax, len(closing))], &p); err != nil {
				return p.closed, err
			}
		}
		if len(ids) < s.cfg.CloseBatch {
			break
		}
		after = ids[len(ids)-1]
	}
	if p.failed > 0 {
		slog.WarnContext(ctx, "timeout closer: orders left unpaid for the next pass", "count", p.failed, "closed", p.closed)
	}
	return p.closed, nil
}

// pass counts what one CloseExpired did.
type pass struct{ closed, failed int }

// closeClaims closes the expired orders among ids in one claim; when its
// transaction fails after its retries, one claim per order, so that an
// order that cannot be closed costs only itself. It returns an error only
// when the pass cannot go on (passEnds).
func (s *Service) closeClaims(ctx context.Context, cutoff time.Time, ids []int64, p *pass) error {
	n, err := s.closeClaim(ctx, cutoff, ids)
	if err == nil {
		p.closed += n
		return nil
	}
	if passEnds(ctx, err) {
		return store.Classify(err)
	}
	if len(ids) > 1 {
		slog.InfoContext(ctx, "timeout closer: a claim failed, closing its orders one by one",
			"orders", fmt.Sprint(ids[0], "…", ids[len(ids)-1]), "cause", causeOf(err), "err", err)
	}
	for _, id := range ids {
		n, err := s.closeClaim(ctx, cutoff, []int64{id})
		switch {
		case err == nil:
			p.closed += n
		case passEnds(ctx, err):
			return store.Classify(err)
		default:
			// Logged as what it is (a deadlock past its retries, a lock wait,
			// a row the database refuses), never as "database unavailable":
			// the database answered.
			p.failed++
			slog.ErrorContext(ctx, "timeout closer: order not closed", "order", id, "cause", causeOf(err), "err", err)
		}
	}
	return nil
}

// closeClaim closes, in one transaction, the orders among ids (ascending, at
// most claimSize) that are still UNPAID and expired and that no other
// transaction holds, and returns how many it closed. The transaction runs
// again on a deadlock or a lock wait (store.WithTx: at most twice, after a
// jittered pause), as placement's does.
//
// Locks in the order of every stock-moving transaction: the goods of the
// orders shared first (lockOrderGoods), then the orders' rows (the claim),
// then their SKU rows, pools and listing (closeLocked). The claim is a
// locking read that skips what it cannot lock at once: an order another
// closer has claimed is that closer's, and one a payment or a cancel holds
// is about to leave UNPAID (or, if that rolls back, waits for the next
// pass). Taking the orders before their goods would hold an order's row
// while waiting behind a catalog edit that waits for a payment that waits
// for the row.
func (s *Service) closeClaim(ctx context.Context, cutoff time.Time, ids []int64) (int, error) {
	var won []*Order
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		won = nil
		if err := lockOrderGoods(ctx, tx, ids...); err != nil {
			return err
		}
		// By id alone, so that exactly these rows are locked: with a
		// condition on the status, MariaDB may read them through the
		// (status, created_at) index and lock its gaps, where placements
		// insert (seen as deadlocks with placeOrder). The status is checked
		// on what the locking read returns; created_at never changes.
		var rows []struct {
			ID     int64  `sql:"id"`
			Status string `sql:"status"`
		}
		err := tx.Order.Query().Where(order.IDIn(ids...)).Order(order.ByID()).
			Modify(func(s *entsql.Selector) {
				s.Select(s.C(order.FieldID), s.C(order.FieldStatus))
				store.ClaimLock(s)
			}).Scan(ctx, &rows)
		if err != nil {
			return fmt.Errorf("claiming expired orders: %w", err)
		}
		var claimed []int64
		for _, r := range rows {
			if r.Status == string(enums.OrderUnpaid) {
				claimed = append(claimed, r.ID)
			}
		}
		if len(claimed) == 0 {
			return nil
		}
		won, err = closeLocked(ctx, tx, claimed, Timeout, s.now())
		if err != nil {
			return err
		}
		if s.closing != nil {
			return s.closing(won)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return len(won), nil
}

// passEnds reports an error after which no order of the pass can be
// closed: ctx ended, or the database is gone (a connection that failed,
// not a statement it answered with a conflict or a refusal).
func passEnds(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	return errors.Is(store.Classify(err), store.ErrUnavailable) && store.RetryCause(err) == ""
}

// causeOf names what failed an order's close for the log: the conflict
// (store.RetryCause: "deadlock", "lock_wait", …) or "error".
func causeOf(err error) string {
	if c := store.RetryCause(err); c != "" {
		return c
	}
	return "error"
}
