package inventory

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/internal/guard"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// Balance is a SKU's stock and lock_stock as read.
type Balance struct{ Stock, Locked int64 }

// WriteLocked is the batch engine of SQLite, whose IMMEDIATE transaction
// holds the database's one write lock from BEGIN: what the caller read
// inside it (read: the SKUs' balances; each pool take's Pool) is exact, so
// the guards held when it decided and no goods lock is needed. Each take is
// then one CAS for its total (which cannot fail short of something that
// bypasses the lock, and is refused rather than booked), its ledger rows
// chained from the balance read (none when lock: stock did not move), the
// listing's flip when it emptied a SKU, and a pool's counter.
func WriteLocked(ctx context.Context, tx *ent.Tx, w StockWrite, read map[int64]Balance) error {
	if err := guard.TakeRows(ctx, tx, w.Claims); err != nil {
		return err
	}
	for i := range w.Takes {
		t := &w.Takes[i]
		var err error
		if t.Pool != nil {
			err = takePoolLocked(ctx, tx, t, w.At)
		} else {
			err = takeLocked(ctx, tx, t, read[t.Moves[0].ItemID])
		}
		if err != nil {
			return err
		}
	}
	for i := range w.Counters {
		if err := (guard.SQLite{}).Counter(ctx, tx, &w.Counters[i]); err != nil {
			return err
		}
	}
	return nil
}

func takeLocked(ctx context.Context, tx *ent.Tx, t *Take, b Balance) error {
	id, total := t.Moves[0].ItemID, t.total()
	if held, err := (skuCAS{id: id, n: total, floor: total, lock: t.Lock}).exec(ctx, tx); err != nil {
		return err
	} else if !held {
		return fmt.Errorf("taking stock of SKU %d: %d available under the lock, yet the CAS for %d failed", id, b.Stock-b.Locked, total)
	}
	if b.Stock-b.Locked-total <= 0 {
		if err := listing.Emptied(ctx, tx, t.Moves[0].GoodsID); err != nil {
			return err
		}
	}
	if t.Lock {
		return nil
	}
	return bookChain(ctx, tx, b.Stock, t.Moves)
}

func takePoolLocked(ctx context.Context, tx *ent.Tx, t *Take, at time.Time) error {
	p, total := t.Pool, t.total()
	var q store.Bound
	poolCAS(&q, p, t.Terms.Price, total, t.Lock, at)
	res, err := tx.ExecContext(ctx, q.String(), q.Args...)
	if err != nil {
		return fmt.Errorf("taking stock of pool %d: %w", p.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("taking stock of pool %d: %d available under the lock, yet the CAS for %d failed", p.ID, Available(p), total)
	}
	if !t.Lock {
		if err := bookChain(ctx, tx, p.Stock, t.Moves); err != nil {
			return err
		}
	}
	c := t.counter()
	return guard.SQLite{}.Counter(ctx, tx, &c)
}
