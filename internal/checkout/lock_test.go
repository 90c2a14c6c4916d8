package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// lockMode switches the demo T-shirt to lock-at-order, as an admin would
// (a catalog edit on another connection).
func (f *fixture) lockMode(t *testing.T) {
	t.Helper()
	if _, err := f.db.SQL.Exec("UPDATE goods SET stock_mode = ?, version = version + 1 WHERE id = ?", string(enums.LockAtOrder), f.ids[demo.TShirtCode]); err != nil {
		t.Fatal(err)
	}
}

// locked reads a SKU's lock_stock.
func (f *fixture) locked(t *testing.T, id int64) int64 {
	t.Helper()
	var n int64
	if err := f.db.SQL.QueryRow("SELECT lock_stock FROM sku WHERE id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A lock-at-order SKU with 200 in stock and 1000 buyers, 64 at a time:
// exactly 200 orders lock a unit each; stock does not move (no ledger row),
// everything is locked, nothing is available; one more order is
// OUT_OF_STOCK.
func TestLockModeNeverOverLocks(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		f.lockMode(t)
		id := f.skuID(t, "黑色,L")
		ledgerRows := f.count(t, "stock_log")
		var placed, refused atomic.Int64
		var other atomic.Value
		race(1000, 64, func(i int) {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(id, 1)}})
			switch {
			case err == nil && o.Lines[0].StockMode == enums.LockAtOrder:
				placed.Add(1)
			case errors.Is(err, ErrOutOfStock):
				refused.Add(1)
			default:
				other.CompareAndSwap(nil, fmt.Sprint(err, o))
			}
		})
		if e := other.Load(); e != nil {
			t.Fatalf("unexpected outcome: %v", e)
		}
		if placed.Load() != 200 || refused.Load() != 800 {
			t.Errorf("placed %d, refused %d; want 200, 800", placed.Load(), refused.Load())
		}
		if got, lk, led := f.stock(t, id), f.locked(t, id), f.ledgerSum(t, id, 0); got != 200 || lk != 200 || led != 200 {
			t.Errorf("stock %d, locked %d, ledger sum %d; want 200, 200, 200", got, lk, led)
		}
		if n := f.count(t, "stock_log"); n != ledgerRows {
			t.Errorf("%d ledger rows written by locking orders, want 0", n-ledgerRows)
		}
		var lines int64
		if err := db.SQL.QueryRow("SELECT COALESCE(SUM(quantity), 0) FROM order_line WHERE item_id = ? AND stock_mode = ? AND lock_state = ?",
			id, string(enums.LockAtOrder), string(enums.LockHeld)).Scan(&lines); err != nil || lines != 200 {
			t.Errorf("locked lines hold %d units (%v), want 200", lines, err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "late", Items: []ItemInput{one(id, 1)}}); !errors.Is(err, ErrOutOfStock) {
			t.Errorf("one more order: %v, want OUT_OF_STOCK", err)
		}
	})
}
