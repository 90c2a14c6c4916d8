package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// pay runs PayTx for the order as a payment's notification would.
func (f *fixture) pay(t *testing.T, orderID int64, p Payer) bool {
	t.Helper()
	var won bool
	err := store.WithTx(context.Background(), f.db, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		won, err = PayTx(ctx, tx, orderID, p, f.svc.now())
		return err
	})
	if err != nil {
		t.Errorf("PayTx(%d, %+v): %v", orderID, p, err)
	}
	return won
}

// clean fails when reconciliation finds any SKU off its ledger or its locks.
func (f *fixture) clean(t *testing.T, when string) {
	t.Helper()
	d, err := inventory.New(f.db).Reconcile(context.Background(), 100)
	if err != nil || len(d) != 0 {
		t.Errorf("%s: reconciliation found %+v (%v), want nothing", when, d, err)
	}
}

func (f *fixture) rows(t *testing.T, id int64, ct inventory.ChangeType) int {
	t.Helper()
	n, err := f.db.Client.StockLog.Query().Where(stocklog.ItemID(id), stocklog.ChangeType(int8(ct))).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (f *fixture) eventsOf(t *testing.T, typ string) int {
	t.Helper()
	n, err := f.db.Client.Outbox.Query().Where(outbox.Type(typ)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// 200 lock-mode orders of one unit, then 150 paid (each paid three times at
// once, as racing notifications would), 30 cancelled and 20 closed by two
// closers racing: the lock becomes the deduction exactly once per paid
// order (change type 2), and every other lock is released exactly once.
func TestLockModePayCancelClose(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		f.lockMode(t)
		id := f.skuID(t, "黑色,L")
		orders := make([]*Order, 200)
		race(200, 64, func(i int) {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(id, 1)}})
			if err != nil {
				t.Error(err)
			}
			orders[i] = o
		})
		if t.Failed() {
			t.FailNow()
		}
		race(150*3, 64, func(i int) {
			o := orders[i/3]
			f.pay(t, o.ID, Payer{ID: int64(1000 + i/3), Provider: "mock", PaymentID: fmt.Sprint("pay-", i/3), Amount: o.Amount})
		})
		if got, lk, n := f.stock(t, id), f.locked(t, id), f.rows(t, id, inventory.PaymentDeduct); got != 50 || lk != 50 || n != 150 {
			t.Errorf("after 150 payments: stock %d, locked %d, %d type-2 rows; want 50, 50, 150", got, lk, n)
		}
		if n := f.eventsOf(t, EventOrderPaid); n != 150 {
			t.Errorf("%d OrderPaid events, want 150", n)
		}
		f.clean(t, "after the payments")

		race(30, 16, func(i int) {
			if _, err := f.svc.CancelOrder(ctx, orders[150+i].UserID, false, orders[150+i].OrderSn); err != nil {
				t.Error(err)
			}
		})
		f.advance(f.svc.cfg.OrderTTL + time.Minute)
		var wg sync.WaitGroup
		closed := make([]int, 2)
		for c := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := f.svc.CloseExpired(ctx)
				if err != nil {
					t.Error(err)
				}
				closed[c] = n
			}()
		}
		wg.Wait()
		if closed[0]+closed[1] != 20 {
			t.Errorf("the closers closed %v, want 20 in all", closed)
		}
		if got, lk := f.stock(t, id), f.locked(t, id); got != 50 || lk != 0 || f.ledgerSum(t, id, 0) != 50 {
			t.Errorf("after cancels and closes: stock %d, locked %d, ledger %d; want 50, 0, 50", got, lk, f.ledgerSum(t, id, 0))
		}
		if n := f.rows(t, id, inventory.CloseRestore); n != 0 {
			t.Errorf("%d restore rows for lock-mode lines, want 0 (stock never moved)", n)
		}
		var released int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM order_line WHERE item_id = ? AND lock_state = ?", id, string(enums.LockReleased)).Scan(&released); err != nil || released != 50 {
			t.Errorf("%d lines RELEASED (%v), want 50", released, err)
		}
		f.clean(t, "after cancels and closes")
	})
}

// Money that comes after the timeout closer released the lock: with stock
// still available the order is paid after all (one type-2 row,
// OrderPaidAfterClose, not flagged); with none left it stays CLOSED,
// flagged, and stock is untouched.
func TestLockModePaymentAfterClose(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		f.lockMode(t)
		id := f.skuID(t, "藏青,XL") // 5 in stock
		place := func(user string) *Order {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: user, Items: []ItemInput{one(id, 1)}})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		late := place("late")
		f.advance(f.svc.cfg.OrderTTL + time.Minute)
		if n, err := f.svc.CloseExpired(ctx); err != nil || n != 1 {
			t.Fatalf("closer: %d, %v; want 1", n, err)
		}
		if !f.pay(t, late.ID, Payer{ID: 1, Provider: "mock", PaymentID: "late-1", Amount: late.Amount}) {
			t.Error("a payment after the close, with stock available, did not pay the order")
		}
		row := db.Client.Order.GetX(ctx, late.ID)
		if row.Status != enums.OrderPaid || row.NeedsReview || f.rows(t, id, inventory.PaymentDeduct) != 1 || f.eventsOf(t, EventOrderPaidAfterClose) != 1 {
			t.Errorf("paid after close: %s, needs review %v, %d type-2 rows, %d OrderPaidAfterClose; want PAID, false, 1, 1",
				row.Status, row.NeedsReview, f.rows(t, id, inventory.PaymentDeduct), f.eventsOf(t, EventOrderPaidAfterClose))
		}
		if got, lk := f.stock(t, id), f.locked(t, id); got != 4 || lk != 0 {
			t.Errorf("stock %d, locked %d; want 4, 0", got, lk)
		}
		f.clean(t, "after a payment after the close")

		// Now with nothing left for it: the other four are locked by others.
		gone := place("gone")
		f.advance(f.svc.cfg.OrderTTL + time.Minute)
		if n, err := f.svc.CloseExpired(ctx); err != nil || n != 1 {
			t.Fatalf("closer: %d, %v; want 1", n, err)
		}
		for i := range 4 {
			place(fmt.Sprint("other", i))
		}
		if f.pay(t, gone.ID, Payer{ID: 2, Provider: "mock", PaymentID: "gone-1", Amount: gone.Amount}) {
			t.Error("a payment after the close paid the order with no stock left")
		}
		row = db.Client.Order.GetX(ctx, gone.ID)
		if row.Status != enums.OrderClosed || !row.NeedsReview || f.eventsOf(t, EventPaymentForClosedOrder) != 1 {
			t.Errorf("no stock left: %s, needs review %v, %d PaymentForClosedOrder; want CLOSED, true, 1", row.Status, row.NeedsReview, f.eventsOf(t, EventPaymentForClosedOrder))
		}
		if got, lk, n := f.stock(t, id), f.locked(t, id), f.rows(t, id, inventory.PaymentDeduct); got != 4 || lk != 4 || n != 1 {
			t.Errorf("stock %d, locked %d, %d type-2 rows; want 4, 4, 1 (untouched)", got, lk, n)
		}
		f.clean(t, "after a payment that found no stock")
	})
}

// One order, a deduct-mode SKU and a lock-mode SKU: closed, each line goes
// back by its own mode (a restore row for the one, a released lock for the
// other). Switching the goods' mode while orders are open changes nothing
// for them: each finishes under the mode it was placed with.
func TestMixedModesAndSwitching(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		f.lockMode(t)
		shirt := f.skuID(t, "黑色,L")
		bag, err := db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.BagCode])).OnlyID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec("UPDATE goods SET status = 'ON_SHELF' WHERE id = ?", f.ids[demo.BagCode]); err != nil {
			t.Fatal(err)
		}
		bag0 := f.stock(t, bag)
		mixed, err := f.svc.Place(ctx, PlaceInput{UserID: "m", Items: []ItemInput{one(shirt, 2), one(bag, 3)}})
		if err != nil {
			t.Fatal(err)
		}
		if got, lk, b := f.stock(t, shirt), f.locked(t, shirt), f.stock(t, bag); got != 200 || lk != 2 || b != bag0-3 {
			t.Errorf("placed: shirt stock %d locked %d, bag stock %d; want 200, 2, %d", got, lk, b, bag0-3)
		}
		// The shirt goes back to deduct-at-order with the mixed order open.
		if _, err := db.SQL.Exec("UPDATE goods SET stock_mode = ?, version = version + 1 WHERE id = ?", string(enums.DeductAtOrder), f.ids[demo.TShirtCode]); err != nil {
			t.Fatal(err)
		}
		after, err := f.svc.Place(ctx, PlaceInput{UserID: "d", Items: []ItemInput{one(shirt, 1)}})
		if err != nil || after.Lines[0].StockMode != enums.DeductAtOrder {
			t.Fatalf("placed after the switch: %+v, %v; want a deduct-mode line", after, err)
		}
		if got, lk := f.stock(t, shirt), f.locked(t, shirt); got != 199 || lk != 2 {
			t.Errorf("after the switch: shirt stock %d, locked %d; want 199, 2 (the open lock stays)", got, lk)
		}
		if _, err := f.svc.CancelOrder(ctx, "m", false, mixed.OrderSn); err != nil {
			t.Fatal(err)
		}
		if got, lk, b := f.stock(t, shirt), f.locked(t, shirt), f.stock(t, bag); got != 199 || lk != 0 || b != bag0 {
			t.Errorf("mixed order closed: shirt stock %d locked %d, bag %d; want 199, 0, %d", got, lk, b, bag0)
		}
		if f.rows(t, bag, inventory.CloseRestore) != 1 || f.rows(t, shirt, inventory.CloseRestore) != 0 {
			t.Errorf("restore rows: bag %d, shirt %d; want 1, 0", f.rows(t, bag, inventory.CloseRestore), f.rows(t, shirt, inventory.CloseRestore))
		}
		if _, err := f.svc.CancelOrder(ctx, "d", false, after.OrderSn); err != nil {
			t.Fatal(err)
		}
		if got, lk := f.stock(t, shirt), f.locked(t, shirt); got != 200 || lk != 0 || f.rows(t, shirt, inventory.CloseRestore) != 1 {
			t.Errorf("deduct-mode order closed: stock %d, locked %d, %d restore rows; want 200, 0, 1", got, lk, f.rows(t, shirt, inventory.CloseRestore))
		}
		f.clean(t, "after both orders closed")

		// A lock nobody holds is what reconciliation is for.
		if _, err := db.SQL.Exec("UPDATE sku SET lock_stock = lock_stock + 3 WHERE id = ?", shirt); err != nil {
			t.Fatal(err)
		}
		d, err := inventory.New(db).Reconcile(ctx, 100)
		if err != nil || len(d) != 1 || d[0].ItemID != shirt || d[0].LockDiff != 3 || d[0].Diff != 0 || !d[0].LockDrift() {
			t.Errorf("a planted lock: reconciliation found %+v (%v), want SKU %d with lockDiff 3", d, err, shirt)
		}
		// Releasing a lock twice is refused, not booked below zero.
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			return inventory.Release(ctx, tx, []inventory.RestoreLine{{ItemID: shirt, Num: 4}})
		}); !errors.Is(err, inventory.ErrLockDrift) {
			t.Errorf("releasing more than is locked: %v, want ErrLockDrift", err)
		}
	})
}
