package checkout

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"storefront/internal/platform/store"
)

// The seed's incident: 200 in stock, a crowd buying one each. Exactly 200
// orders, never a negative balance, and the ledger accounts for every unit.
func TestHotSKUNeverOversells(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL := f.skuID(t, "黑色,L")
		got := sell(1000, func(i int) error {
			_, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("buyer-", i), Items: []ItemInput{one(blackL, 1)}})
			return err
		})
		if got.other.Load() > 0 {
			t.Fatalf("%d requests failed with something other than OUT_OF_STOCK, first: %v", got.other.Load(), got.first.Load())
		}
		ok, oos := &got.ok, &got.outOfStock
		if ok.Load() != 200 || oos.Load() != 800 {
			t.Errorf("placed %d, out of stock %d; want 200 and 800", ok.Load(), oos.Load())
		}
		if got := f.stock(t, blackL); got != 0 {
			t.Errorf("stock = %d, want 0", got)
		}
		if got := f.count(t, "orders"); got != 200 {
			t.Errorf("orders = %d, want 200", got)
		}
		if got := f.ledgerSum(t, blackL, 1); got != -200 {
			t.Errorf("order deductions in the ledger = %d, want -200", got)
		}
		if got := f.ledgerSum(t, blackL, 0); got != 0 {
			t.Errorf("ledger balance = %d, want 0 (= stock)", got)
		}
		var neg int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE item_id = ? AND (after_stock < 0 OR before_stock <> after_stock - change_num)", blackL).Scan(&neg); err != nil || neg != 0 {
			t.Errorf("ledger rows with a negative or inconsistent balance: %d (%v)", neg, err)
		}
	})
}

// Two SKUs bought together, half the buyers naming them in the other order:
// sorted lock order means no deadlock, and a retried one never reaches a client.
func TestOppositeOrderNoDeadlock(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		a, b := f.skuID(t, "白色,M"), f.skuID(t, "藏青,S")
		f.setStock(t, a, 10000)
		f.setStock(t, b, 10000)
		var failed atomic.Int64
		var first atomic.Value
		race(400, 64, func(i int) {
			items := []ItemInput{one(a, 1), one(b, 2)}
			if i%2 == 1 {
				items = []ItemInput{one(b, 2), one(a, 1)}
			}
			if _, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: items}); err != nil {
				failed.Add(1)
				first.CompareAndSwap(nil, err)
			}
		})
		if failed.Load() > 0 {
			t.Fatalf("%d orders failed, first: %v", failed.Load(), first.Load())
		}
		if sa, sb := f.stock(t, a), f.stock(t, b); sa != 10000-400 || sb != 10000-800 {
			t.Errorf("stock = %d, %d; want %d, %d", sa, sb, 10000-400, 10000-800)
		}
		if la, lb := f.ledgerSum(t, a, 0), f.ledgerSum(t, b, 0); la != f.stock(t, a) || lb != f.stock(t, b) {
			t.Errorf("ledger balances %d, %d differ from stock", la, lb)
		}
	})
}

// One Idempotency-Key, 500 requests, 50 at a time: one order, one unit.
func TestOneKeyManyRequests(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL := f.skuID(t, "黑色,L")
		var mu sync.Mutex
		sns := map[string]int{}
		var inProgress atomic.Int64
		var first atomic.Value
		race(500, 50, func(i int) {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", IdempotencyKey: "fixed-key-for-test", Items: []ItemInput{one(blackL, 1)}})
			switch {
			case err == nil:
				mu.Lock()
				sns[o.OrderSn]++
				mu.Unlock()
			case isAny(err, ErrIdempotencyInProgress):
				inProgress.Add(1)
			default:
				first.CompareAndSwap(nil, err)
			}
		})
		if e := first.Load(); e != nil {
			t.Fatalf("unexpected error: %v", e)
		}
		if len(sns) != 1 {
			t.Fatalf("successful responses carry %d order numbers %v, want 1", len(sns), sns)
		}
		if got := f.count(t, "orders"); got != 1 {
			t.Errorf("orders = %d, want 1", got)
		}
		if got := f.stock(t, blackL); got != 199 {
			t.Errorf("stock = %d, want 199", got)
		}
		t.Logf("%d replays/successes, %d IDEMPOTENCY_IN_PROGRESS", 500-inProgress.Load(), inProgress.Load())
	})
}
