package checkout

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/sku"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A switch of stock mode applies to the very next order, on both paths:
// nothing remembered of the goods (the MySQL group path's lastRead) may
// place it under the old mode.
func TestModeSwitchAppliesToTheNextOrder(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		id := f.skuID(t, "黑色,L")
		n := 0
		place := func(want enums.StockMode) {
			t.Helper()
			n++
			o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", n), Items: []ItemInput{one(id, 1)}})
			if err != nil {
				t.Fatal(err)
			}
			if o.Lines[0].StockMode != want {
				t.Errorf("order %d placed under %s, want %s", n, o.Lines[0].StockMode, want)
			}
		}
		place(enums.DeductAtOrder)
		f.lockMode(t)
		for range 3 {
			place(enums.LockAtOrder)
		}
		if _, err := db.SQL.Exec("UPDATE goods SET stock_mode = ?, version = version + 1 WHERE id = ?", string(enums.DeductAtOrder), f.ids[demo.TShirtCode]); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			place(enums.DeductAtOrder)
		}
		if got, lk := f.stock(t, id), f.locked(t, id); got != 197 || lk != 3 {
			t.Errorf("stock %d, locked %d; want 197 (three deducted), 3 (three locked)", got, lk)
		}
		f.clean(t, "after the switches")
	})
}

// Money for a lock-mode order that the closer closed after the payment's
// transaction had already read something (on MySQL its snapshot then still
// shows the order UNPAID): the CAS, not that read, decides, and the order
// is paid after close while stock allows.
func TestPayAfterCloseDecidedByTheCAS(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		f.lockMode(t)
		id := f.skuID(t, "黑色,L")
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u", Items: []ItemInput{one(id, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		f.advance(f.svc.cfg.OrderTTL + time.Minute)
		if db.Kind == store.SQLite { // one writer: the closer cannot commit inside the payment's transaction
			if n, err := f.svc.CloseExpired(ctx); err != nil || n != 1 {
				t.Fatalf("closer: %d, %v", n, err)
			}
		}
		var won bool
		err = store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			if _, err := tx.Order.Query().Where(order.ID(o.ID)).Only(ctx); err != nil { // the payment's first read
				return err
			}
			if db.Kind != store.SQLite {
				if n, err := f.svc.CloseExpired(context.Background()); err != nil || n != 1 {
					return fmt.Errorf("closer: %d, %w", n, err)
				}
			}
			won, err = PayTx(ctx, tx, o.ID, Payer{ID: 7, Provider: "mock", PaymentID: "p"}, f.svc.now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		row := db.Client.Order.GetX(ctx, o.ID)
		if !won || row.Status != enums.OrderPaid || row.NeedsReview {
			t.Errorf("money after the close with stock available: won %v, order %s, flagged %v; want paid after close", won, row.Status, row.NeedsReview)
		}
		if got, lk := f.stock(t, id), f.locked(t, id); got != 199 || lk != 0 {
			t.Errorf("stock %d, locked %d; want 199, 0", got, lk)
		}
		f.clean(t, "after the payment")
	})
}

// Closing and paying orders of a lock-mode and a deduct-mode SKU lock the
// SKU rows in ascending id order, like placing them: racing placements of
// the same two SKUs never deadlock with them (MariaDB; SQLite has one
// writer). The lock-mode SKU is the lower id for the closes and the higher
// for the payments, the two orders in which a pass per mode would go wrong.
func TestMixedModeTransitionsKeepTheLockOrder(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lockBag  bool // else the T-shirt (the lower id) is lock-mode
		transact func(f *fixture, o *Order, i int) error
	}{
		{"close", false, func(f *fixture, o *Order, _ int) error {
			_, err := f.svc.CancelOrder(context.Background(), o.UserID, false, o.OrderSn)
			return err
		}},
		{"pay", true, func(f *fixture, o *Order, i int) error {
			return store.WithTx(context.Background(), f.db, func(ctx context.Context, tx *ent.Tx) error {
				_, err := PayTx(ctx, tx, o.ID, Payer{ID: int64(i + 1), Provider: "mock", PaymentID: itoa(int64(i))}, f.svc.now())
				return err
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testdb.EachServer(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				shirt := f.skuID(t, "黑色,L")
				bag, err := db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.BagCode])).OnlyID(ctx)
				if err != nil {
					t.Fatal(err)
				}
				lockGoods := f.ids[demo.TShirtCode]
				if tc.lockBag {
					lockGoods = f.ids[demo.BagCode]
				}
				if _, err := db.SQL.Exec("UPDATE goods SET status = 'ON_SHELF' WHERE id = ?", f.ids[demo.BagCode]); err != nil {
					t.Fatal(err)
				}
				if _, err := db.SQL.Exec("UPDATE goods SET stock_mode = 'LOCK_AT_ORDER', version = version + 1 WHERE id = ?", lockGoods); err != nil {
					t.Fatal(err)
				}
				f.setStock(t, shirt, 10000)
				f.setStock(t, bag, 10000)
				var retries atomic.Int64
				store.OnRetry = func(string) { retries.Add(1) }
				defer func() { store.OnRetry = func(string) {} }()
				const n = 100
				orders := make([]*Order, n)
				for i := range n {
					if orders[i], err = f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("m", i), Items: []ItemInput{one(shirt, 1), one(bag, 1)}}); err != nil {
						t.Fatal(err)
					}
				}
				var failed atomic.Int64
				var first atomic.Value
				race(2*n, 16, func(i int) {
					var err error
					if i%2 == 0 {
						err = tc.transact(f, orders[i/2], i)
					} else {
						_, err = f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("p", i), Items: []ItemInput{one(shirt, 1), one(bag, 1)}})
					}
					if err != nil {
						failed.Add(1)
						first.CompareAndSwap(nil, err)
					}
				})
				if failed.Load() != 0 || retries.Load() != 0 {
					t.Errorf("%s racing placements: %d failed (first: %v), %d transactions retried; want none", tc.name, failed.Load(), first.Load(), retries.Load())
				}
				f.clean(t, "after the race")
			})
		})
	}
}

// A server error after the batch's COMMIT (here a statement the test hook
// appends after it) is not a rolled-back batch: the batch reads its orders
// back (readBack), finds them, and the buyer gets the order; a retry with
// the same key replays it.
func TestGroupErrorAfterCommitIsNotARollback(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db, path{"group", true})
		ctx := context.Background()
		id := f.skuID(t, "黑色,L")
		mb := hooksOf(f.svc)
		mb.afterCommit = func(q *store.Text) { q.SQL("SELECT * FROM no_such_table_after_commit; ") }
		in := PlaceInput{UserID: "u", IdempotencyKey: "after-commit", Items: []ItemInput{one(id, 1)}}
		first, err := f.svc.Place(ctx, in)
		mb.afterCommit = nil
		if err != nil || first == nil || first.ID == 0 {
			t.Fatalf("an error after COMMIT answered %+v, %v; want the committed order, read back", first, err)
		}
		if got := f.count(t, "orders"); got != 1 || f.stock(t, id) != 199 {
			t.Errorf("%d orders, stock %d; want the batch's one order, 199", got, f.stock(t, id))
		}
		o, err := f.svc.Place(ctx, in)
		if err != nil || f.count(t, "orders") != 1 || o.ID != first.ID {
			t.Errorf("the retry: %+v, %v, %d orders; want the same order replayed", o, err, f.count(t, "orders"))
		}
	})
}
