package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// Closing is what one business document gives back as it closes: the
// stock of the lines it restores and the locks of the lines it releases.
type Closing struct {
	BizSn            string
	Restore, Release []RestoreLine
}

// RestoreAndReleaseAll is RestoreAndRelease for several documents of
// bizType closed in one transaction (the timeout closer's claim of many
// orders), in a few statements whatever their number: the SKU rows of all
// of them by one locking read in ascending id (the lock order of every
// stock-moving transaction), every ledger row in one insert, its balances
// counted on from the balance read under the lock, one UPDATE per SKU for
// all the documents' units, and the listing once at the end. Closing the
// documents one after another in the transaction would take a SKU row
// below one it holds, and listing rows before SKU rows: the orders a
// placement of two SKUs deadlocks with.
//
// Unlike Restore, a document whose restore was booked before (uk_biz)
// fails the call, and the caller's transaction must roll back: the
// closer's state CAS makes that never happen, and if it did, the closer
// closes the claim's orders again one by one, where Restore makes the
// repeat a no-op. It returns how many lines moved stock.
func RestoreAndReleaseAll(ctx context.Context, tx *ent.Tx, t ChangeType, bizType string, docs []Closing) (int, error) {
	type units struct {
		goods, restore, release int64
		moves                   []Movement
	}
	perSKU := map[int64]*units{}
	var all []RestoreLine
	for _, d := range docs {
		for i, lines := range [][]RestoreLine{d.Restore, d.Release} {
			for _, l := range lines {
				if l.Num <= 0 {
					continue
				}
				u := perSKU[l.ItemID]
				if u == nil {
					u = &units{goods: l.GoodsID}
					perSKU[l.ItemID] = u
				}
				if i == 0 {
					u.restore += l.Num
					u.moves = append(u.moves, Movement{ItemID: l.ItemID, GoodsID: l.GoodsID, Num: l.Num, Type: t, BizType: bizType, BizSn: d.BizSn})
				} else {
					u.release += l.Num
				}
				all = append(all, l)
			}
		}
	}
	if len(all) == 0 {
		return 0, nil
	}
	if err := lockGoods(ctx, tx, goodsOfLines(all)...); err != nil {
		return 0, err
	}
	ids := slices.Sorted(func(yield func(int64) bool) {
		for id := range perSKU {
			if !yield(id) {
				return
			}
		}
	})
	var rows []struct {
		ID     int64 `sql:"id"`
		Stock  int64 `sql:"stock"`
		Locked int64 `sql:"lock_stock"`
	}
	err := tx.Sku.Query().Where(sku.IDIn(ids...)).Order(sku.ByID()).Modify(func(s *entsql.Selector) {
		s.Select(s.C(sku.FieldID), s.C(sku.FieldStock), s.C(sku.FieldLockStock))
		store.UpdateLock(s)
	}).Scan(ctx, &rows)
	if err != nil {
		return 0, fmt.Errorf("locking SKUs %v to restore them: %w", ids, err)
	}
	if len(rows) != len(ids) {
		return 0, fmt.Errorf("restoring SKUs %v: %d of them exist", ids, len(rows))
	}
	// The ledger first, as Restore books it before the stock moves: a
	// repeated restore fails here, before any stock does.
	ledger := store.NewInsert(stocklog.Table)
	restored := 0
	for _, r := range rows {
		u := perSKU[r.ID]
		if r.Locked < u.release {
			return 0, fmt.Errorf("%w: SKU %d, releasing %d", ErrLockDrift, r.ID, u.release)
		}
		before := r.Stock
		for i := range u.moves {
			m := &u.moves[i]
			ledger.Row(func(v store.Values) { m.write(v, itoa(before), itoa(before+m.Num)) })
			before += m.Num
			restored++
		}
		if ledger.Len() >= ledgerChunk {
			if err := store.Exec(ctx, tx, ledger); err != nil {
				return 0, fmt.Errorf("booking the restores of SKUs %v: %w", ids, err)
			}
			ledger = store.NewInsert(stocklog.Table)
		}
	}
	if ledger.Len() > 0 {
		if err := store.Exec(ctx, tx, ledger); err != nil {
			return 0, fmt.Errorf("booking the restores of SKUs %v: %w", ids, err)
		}
	}
	for _, id := range ids {
		u := perSKU[id]
		res, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + ?, lock_stock = lock_stock - ?, stock_version = stock_version + 1 WHERE id = ? AND lock_stock >= ?",
			u.restore, u.release, id, u.release)
		if err != nil {
			return 0, fmt.Errorf("restoring SKU %d: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, err
		} else if n != 1 {
			return 0, fmt.Errorf("%w: SKU %d, releasing %d", ErrLockDrift, id, u.release)
		}
	}
	slices.SortFunc(all, func(a, b RestoreLine) int { return cmp.Compare(a.ItemID, b.ItemID) })
	return restored, listing.Restocked(ctx, tx, goodsOfLines(all), itemsOf(all)...)
}

// ledgerChunk bounds the rows of one ledger insert (SQLite's bound
// arguments: 11 a row).
const ledgerChunk = 500
