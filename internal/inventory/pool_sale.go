package inventory

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/internal/guard"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// Selling from a stock pool: the pool's own row takes the CAS, its ledger
// row carries the pool id, and the SKU's row is never touched (no lock on
// it), so a flash sale never queues ordinary orders of the same SKU.

var (
	// ErrPoolNotActive: ordering from a pool before it starts, after it
	// ends or after it was closed.
	ErrPoolNotActive = errs.New(errs.Conflict, "the stock pool is not on sale")
	// ErrPoolLimitExceeded: the buyer's units from the pool over their
	// orders that are not closed would pass its per-buyer limit.
	ErrPoolLimitExceeded = errs.New(errs.Conflict, "the per-buyer limit of the stock pool would be passed")
)

// returnedIs is the condition on a pool's returned flag (bound to true or
// false) for a write that finds the pool by id. The IS TRUE keeps MariaDB off
// the (returned, ends_at) index, which it picks over the primary key while
// the table is small (a shop's first pools): such a write then locks the
// index record before the row, while the return holds the row and changes
// returned, i.e. needs that index record, and the two deadlock (the end
// racing releases in TestLockModePoolUnderConcurrency, retries exhausted).
// Only the return itself (returnPool) may look the flag up by the index.
// (It was "returned + 0 = ?", which PostgreSQL refuses for a boolean; a
// truth test is a function of the column to every optimizer alike.)
const returnedIs = "(returned IS TRUE) = ?"

// PoolOpen says whether pool p sells at now.
func PoolOpen(p *ent.StockPool, now time.Time) bool {
	return p.ClosedAt == nil && !p.Returned && !now.Before(p.StartsAt) && now.Before(p.EndsAt)
}

// takePool takes a sale's units from its pool: the pool's CAS, which holds
// only while the pool is on sale at the sale's price and has the units
// available (ErrPoolNotActive, ErrOutOfStock otherwise, decided from the row
// under the lock), then the ledger row from the row just moved (none for a
// locked sale: stock did not move), then the buyer's counter
// (ErrPoolLimitExceeded): the pool's row before its counters, as in the
// group-commit batch (pool_batch.go), so neither can wait on the other.
//
// The pool's CAS checks the pool only; the SKU's terms (enabled, same spec
// text, same goods) are checked first by a plain read, as the MariaDB batch
// does (@k in WritePoolTakes): the seller holds the goods lock from
// CheckGoods, its transaction's first statement, so the read sees every
// edit committed before it and none can commit until this one does.
// Without it a SKU disabled between the resolve and the take still sold
// from its pool. A mismatch is a Short: a fresh read decides.
func takePool(ctx context.Context, tx *ent.Tx, s *Sale) error {
	n, id, now := -s.Num, s.PoolID, s.at()
	var check store.Bound
	check.SQL("SELECT COUNT(*) FROM sku WHERE id = ")
	check.Int(s.ItemID)
	check.SQL(" AND ")
	skuSold(&check, s.GoodsID, s.SpecText)
	ok, err := readIDs(ctx, tx, check.String(), check.Args)
	if err != nil {
		return fmt.Errorf("checking SKU %d of pool %d: %w", s.ItemID, id, err)
	}
	if ok[0] == 0 {
		return &Short{*s}
	}
	var q store.Bound
	poolCAS(&q, &ent.StockPool{ID: id, ItemID: s.ItemID}, s.Price, n, s.Lock, now)
	res, err := tx.ExecContext(ctx, q.String(), q.Args...)
	if err != nil {
		return fmt.Errorf("taking stock of pool %d: %w", id, err)
	}
	if moved, err := res.RowsAffected(); err != nil {
		return err
	} else if moved == 0 {
		p, err := tx.StockPool.Get(ctx, id)
		switch {
		case ent.IsNotFound(err):
			return fmt.Errorf("%w: stock pool %d", ErrNotFound, id)
		case err != nil:
			return err
		case p.ItemID != s.ItemID || p.Price != s.Price:
			return &Short{*s} // not as resolved: a fresh read decides
		case !PoolOpen(p, now):
			return fmt.Errorf("%w: pool %d (%s) sells from %s to %s", ErrPoolNotActive, id, p.Name, p.StartsAt.Format(time.RFC3339), p.EndsAt.Format(time.RFC3339))
		}
		return fmt.Errorf("%w: pool %d (%s) has %d available, cannot take %d", ErrOutOfStock, id, p.Name, Available(p), n)
	}
	if !s.Lock {
		if err := bookPool(ctx, tx, &s.Movement); err != nil {
			return err
		}
	}
	return guard.AddCounters(ctx, tx, []guard.Counter{guard.Add(PoolBuyers, id, s.Buyer, n, s.PoolLimit)})
}

// bookPool writes m's ledger row from the pool row this transaction has
// just moved by m and holds locked (bookMoved for a pool).
func bookPool(ctx context.Context, tx *ent.Tx, m *Movement) error {
	return bookFromRow(ctx, tx, m, "stock_pool", m.PoolID)
}

// ReleaseLimit gives a closed order's units of a pool back to its buyer's
// count.
func ReleaseLimit(ctx context.Context, tx *ent.Tx, poolID int64, buyer string, n int64) error {
	if _, err := tx.ExecContext(ctx, "UPDATE pool_buyer SET units = units - ? WHERE pool_id = ? AND user_id = ? AND units >= ?", n, poolID, buyer, n); err != nil {
		return fmt.Errorf("releasing the buyer's units of pool %d: %w", poolID, err)
	}
	return nil
}

// RestorePool gives a pool line's units back for one business document
// (change type t): to the pool while it has not been returned (a CAS on
// returned, so it cannot race the return at its end), to the SKU's main
// stock after. The caller has won its own state CAS.
//
// The goods lock comes first, before the pool's row (goods_lock.go): after
// the pool's return the restore goes to the SKU's row, which needs it.
func RestorePool(ctx context.Context, tx *ent.Tx, t ChangeType, bizType, bizSn string, l RestoreLine) error {
	if err := lockGoods(ctx, tx, l.GoodsID); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "UPDATE stock_pool SET stock = stock + ?, version = version + 1 WHERE id = ? AND "+returnedIs, l.Num, l.PoolID, false)
	if err != nil {
		return fmt.Errorf("restoring pool %d: %w", l.PoolID, err)
	}
	if moved, err := res.RowsAffected(); err != nil {
		return err
	} else if moved == 1 {
		return bookPool(ctx, tx, &Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Num, Type: t, BizType: bizType, BizSn: bizSn, PoolID: l.PoolID})
	}
	l.PoolID = 0 // the pool ended and went back: its units belong to main stock now
	_, err = Restore(ctx, tx, t, bizType, bizSn, []RestoreLine{l})
	return err
}

// A pool follows its goods' stock mode. A lock-at-order pool line raises
// the pool's lock_stock at order (takePool), and its units stay in the
// pool's stock (no ledger row) until the order is paid (DeductPool) or
// closed (ReleasePool). They stay through the pool's return too: the return
// moves only the available remainder, so a payment after it still deducts
// from the pool, and a release after it moves the units to main stock.
//
// Lock order: the SKU rows of lines from main stock, then pool rows, then
// the SKU rows of lines from a pool: a SKU sold from a pool has its pool's
// row taken before its own, by the pool's return (returnPool), a release
// or a restore after it, and a payment (the volume, inventory.Sold, after
// DeductPool). Placing an order never takes a pool line's SKU row. So no
// two transactions deadlock on a SKU and its pool: one holding the SKU's
// row and waiting for the pool's would have to have the SKU from main stock
// and from the pool in one order, and one order takes a SKU from one
// source. A longer cycle needs orders that each take one SKU from main
// stock and another SKU's pool, crosswise, at once; MariaDB would report it
// and store.WithTx retry it.

// DeductPool books the payment of lock-mode pool lines (change type 2 on
// the pool, movements with PoolID): each lock becomes a deduction, stock -=
// n and lock_stock -= n, by a CAS that cannot go below zero (ErrLockDrift).
// It needs no open pool: the locked units stayed in it through its end and
// return. The caller has moved each line LOCKED → DEDUCTED by its own CAS
// and runs this after every SKU row.
func DeductPool(ctx context.Context, tx *ent.Tx, moves []Movement) error {
	for i := range moves {
		m := &moves[i]
		n := -m.Num
		res, err := tx.ExecContext(ctx, "UPDATE stock_pool SET stock = stock - ?, lock_stock = lock_stock - ?, version = version + 1 WHERE id = ? AND lock_stock >= ? AND stock >= ?",
			n, n, m.PoolID, n, n)
		if err != nil {
			return fmt.Errorf("deducting pool %d at payment: %w", m.PoolID, err)
		}
		if moved, err := res.RowsAffected(); err != nil {
			return err
		} else if moved == 0 {
			return fmt.Errorf("%w: pool %d, deducting %d at payment", ErrLockDrift, m.PoolID, n)
		}
		if err := bookPool(ctx, tx, m); err != nil {
			return err
		}
	}
	return nil
}

// ReleasePool gives back the lock of a closed order's lock-mode pool line
// (the caller moved it LOCKED → RELEASED by its own CAS). While the pool has
// not been returned the units become available in it again, and nothing is
// booked (stock did not move). After the return they belong to main stock:
// they leave the pool and reach the SKU as the return's remainder did,
// change type 8 (-n on the pool, +n on main stock) under the order's
// business key, since this document moved them. The CAS on returned waits
// for a racing return's lock, so a unit is never left available in a pool
// already emptied.
//
// The goods lock comes first, before the pool's row (goods_lock.go): after
// the pool's return the release reaches the SKU's row, which needs it.
func ReleasePool(ctx context.Context, tx *ent.Tx, bizType, bizSn string, l RestoreLine, at time.Time) error {
	if err := lockGoods(ctx, tx, l.GoodsID); err != nil {
		return err
	}
	res, err := tx.ExecContext(ctx, "UPDATE stock_pool SET lock_stock = lock_stock - ?, version = version + 1 WHERE id = ? AND lock_stock >= ? AND "+returnedIs,
		l.Num, l.PoolID, l.Num, false)
	if err != nil {
		return fmt.Errorf("releasing the lock on pool %d: %w", l.PoolID, err)
	}
	if moved, err := res.RowsAffected(); err != nil || moved == 1 {
		return err
	}
	res, err = tx.ExecContext(ctx, "UPDATE stock_pool SET stock = stock - ?, lock_stock = lock_stock - ?, version = version + 1 WHERE id = ? AND lock_stock >= ? AND "+returnedIs,
		l.Num, l.Num, l.PoolID, l.Num, true)
	if err != nil {
		return fmt.Errorf("releasing the lock on pool %d after its return: %w", l.PoolID, err)
	}
	if moved, err := res.RowsAffected(); err != nil {
		return err
	} else if moved == 0 {
		return fmt.Errorf("%w: pool %d, releasing %d", ErrLockDrift, l.PoolID, l.Num)
	}
	m := Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: -l.Num, Type: FromPool, BizType: bizType, BizSn: bizSn,
		Remark: "released after the pool's return", At: at, PoolID: l.PoolID}
	if err := bookPool(ctx, tx, &m); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + ?, stock_version = stock_version + 1 WHERE id = ?", l.Num, l.ItemID); err != nil {
		return fmt.Errorf("releasing pool %d to SKU %d: %w", l.PoolID, l.ItemID, err)
	}
	m.Num, m.PoolID, m.Remark = l.Num, 0, "released from pool "+itoa(l.PoolID)
	if err := bookMoved(ctx, tx, &m); err != nil {
		return err
	}
	return listing.Restocked(ctx, tx, []int64{l.GoodsID}, l.ItemID)
}
