package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/orderline"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// scarf is a SKU of the demo's lock-at-order scarf (demo.ScarfStock on hand).
func (f *fixture) scarf(t *testing.T, colour string) int64 {
	t.Helper()
	id, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.ScarfCode]), sku.SpecValueStr(colour)).OnlyID(context.Background())
	if err != nil {
		t.Fatalf("scarf %s: %v", colour, err)
	}
	return id
}

// lockPool moves quantity of SKU id into a pool on sale for a day (past the
// order timeout the tests advance the clock by).
func (f *fixture) lockPool(t *testing.T, id, quantity, limit int64) *inventory.Pool {
	t.Helper()
	now := time.Now()
	p, err := inventory.New(f.db).MoveToPool(context.Background(), inventory.PoolInput{ItemID: id, Name: "围巾秒杀", Price: 9900,
		Quantity: quantity, PerBuyerLimit: limit, StartsAt: now.Add(-time.Minute), EndsAt: now.Add(24 * time.Hour)})
	if err != nil {
		t.Fatalf("MoveToPool: %v", err)
	}
	return p
}

// poolIs fails t unless the pool's view has stock, locked and sold, and its
// ledger rows sum to its stock.
func (f *fixture) poolIs(t *testing.T, when string, id, stock, locked, sold int64) {
	t.Helper()
	p, err := inventory.New(f.db).Pool(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, ledger := f.poolState(t, id)
	if p.Stock != stock || p.LockedStock != locked || p.AvailableStock() != stock-locked || p.Sold != sold || ledger != stock {
		t.Errorf("%s: pool stock %d, locked %d, available %d, sold %d, ledger %d; want %d, %d, %d, %d, %d",
			when, p.Stock, p.LockedStock, p.AvailableStock(), p.Sold, ledger, stock, locked, stock-locked, sold, stock)
	}
}

// bizRows are the ledger rows of one business document and change type.
func (f *fixture) bizRows(t *testing.T, sn string, ct inventory.ChangeType) []*ent.StockLog {
	t.Helper()
	return f.db.Client.StockLog.Query().Where(stocklog.BizSn(sn), stocklog.ChangeType(int8(ct))).
		Order(ent.Asc(stocklog.FieldID)).AllX(context.Background())
}

// A lock-at-order goods with a pool: the pool follows the goods' mode. An
// order locks on the pool (its stock and the SKU's row untouched, no ledger
// row); payment deducts from the pool (a type-2 row with the pool id); a
// cancel before the end releases to the pool; the end returns only the
// available remainder; payment after the return still deducts from the
// pool; a cancel after it sends the units to main stock with one type-8
// pair under the order's key however many cancels race; a refund restores;
// a pool order closed by timeout and paid late is flagged, not revived.
// Reconciliation (SKU locks and pool accounts) is clean after every step.
func TestLockModePoolLifecycle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		id := f.scarf(t, demo.ScarfColours[0])
		p := f.lockPool(t, id, 10, 2)
		skuBefore := db.Client.Sku.GetX(ctx, id)
		ledgerRows := f.count(t, "stock_log")
		place := func(user string, qty int64) *Order {
			t.Helper()
			o, err := f.svc.Place(ctx, PlaceInput{UserID: user, Items: []ItemInput{fromPool(id, p.ID, qty)}})
			if err != nil {
				t.Fatalf("%s ordering %d from the pool: %v", user, qty, err)
			}
			return o
		}
		skuUntouched := func(when string) {
			t.Helper()
			if s := db.Client.Sku.GetX(ctx, id); s.Stock != skuBefore.Stock || s.LockStock != 0 || s.Version != skuBefore.Version {
				t.Errorf("%s: SKU stock %d, locked %d, version %d; want %d, 0, %d (the pool's row takes it all)",
					when, s.Stock, s.LockStock, s.Version, skuBefore.Stock, skuBefore.Version)
			}
		}

		o1 := place("u1", 2)
		if l := db.Client.OrderLine.Query().Where(orderline.OrderID(o1.ID)).OnlyX(ctx); l.StockMode != enums.LockAtOrder || l.LockState != string(enums.LockHeld) || l.PoolID != p.ID {
			t.Errorf("pool line of a lock-mode goods: mode %s, state %q, pool %d; want LOCK_AT_ORDER, LOCKED, %d", l.StockMode, l.LockState, l.PoolID, p.ID)
		}
		f.poolIs(t, "after a locking order", p.ID, 10, 2, 0)
		skuUntouched("after a locking order")
		if n := f.count(t, "stock_log"); n != ledgerRows {
			t.Errorf("%d ledger rows written by a locking pool order, want 0", n-ledgerRows)
		}
		f.poolsBalance(t)

		if !f.pay(t, o1.ID, Payer{ID: 1, Provider: "mock", PaymentID: "o1", Amount: o1.Amount}) {
			t.Fatal("paying o1 did not pay it")
		}
		f.poolIs(t, "after the payment", p.ID, 8, 0, 2)
		if rows := f.bizRows(t, o1.OrderSn, inventory.PaymentDeduct); len(rows) != 1 || rows[0].PoolID != p.ID || rows[0].ChangeNum != -2 ||
			rows[0].BeforeStock != 10 || rows[0].AfterStock != 8 {
			t.Errorf("payment rows %+v, want one type-2 row of -2 (10 → 8) on pool %d", rows, p.ID)
		}
		skuUntouched("after the payment")
		f.poolsBalance(t)

		o2 := place("u2", 2)
		f.poolIs(t, "after a second lock", p.ID, 8, 2, 2)
		if _, err := f.svc.CancelOrder(ctx, "u2", false, o2.OrderSn); err != nil {
			t.Fatal(err)
		}
		f.poolIs(t, "after a cancel before the end", p.ID, 8, 0, 2)
		if rows := f.bizRows(t, o2.OrderSn, inventory.CloseRestore); len(rows) != 0 {
			t.Errorf("a released pool lock booked %d restore rows, want 0 (stock never moved)", len(rows))
		}
		f.poolsBalance(t)

		// Closed by the timeout and paid late: its units went back to the
		// flash sale and its limit was released, so it is flagged.
		late := place("u5", 1)
		f.advance(f.svc.cfg.OrderTTL + time.Minute)
		if n, err := f.svc.CloseExpired(ctx); err != nil || n != 1 {
			t.Fatalf("closer: %d, %v; want 1", n, err)
		}
		f.poolIs(t, "after a timeout close", p.ID, 8, 0, 2)
		if f.pay(t, late.ID, Payer{ID: 5, Provider: "mock", PaymentID: "late", Amount: late.Amount}) {
			t.Error("a payment after the timeout close revived a pool order")
		}
		if row := db.Client.Order.GetX(ctx, late.ID); row.Status != enums.OrderClosed || !row.NeedsReview ||
			f.eventsOf(t, EventPaymentForClosedOrder) != 1 || f.eventsOf(t, EventOrderPaidAfterClose) != 0 {
			t.Errorf("late payment of a pool order: %s, needs review %v, %d PaymentForClosedOrder, %d OrderPaidAfterClose; want CLOSED, true, 1, 0",
				row.Status, row.NeedsReview, f.eventsOf(t, EventPaymentForClosedOrder), f.eventsOf(t, EventOrderPaidAfterClose))
		}
		if rows := f.bizRows(t, late.OrderSn, inventory.PaymentDeduct); len(rows) != 0 {
			t.Errorf("%d payment rows for the flagged order, want 0", len(rows))
		}
		f.poolIs(t, "after the flagged payment", p.ID, 8, 0, 2)
		f.poolsBalance(t)

		// The end returns only the available remainder: 8 on hand, 3 locked.
		o3, o4 := place("u3", 2), place("u4", 1)
		if _, err := inventory.New(db).ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		f.poolIs(t, "after the return", p.ID, 3, 3, 2)
		if got := f.stock(t, id); got != skuBefore.Stock+5 {
			t.Errorf("main stock %d after the return, want %d (the 5 available)", got, skuBefore.Stock+5)
		}
		f.poolsBalance(t)

		if !f.pay(t, o3.ID, Payer{ID: 3, Provider: "mock", PaymentID: "o3", Amount: o3.Amount}) {
			t.Fatal("paying o3 after the return did not pay it")
		}
		f.poolIs(t, "after a payment after the return", p.ID, 1, 1, 4)
		if rows := f.bizRows(t, o3.OrderSn, inventory.PaymentDeduct); len(rows) != 1 || rows[0].PoolID != p.ID || rows[0].ChangeNum != -2 {
			t.Errorf("payment rows after the return %+v, want one type-2 row of -2 on pool %d", rows, p.ID)
		}
		f.poolsBalance(t)

		// Four cancels race; one wins and moves the unit to main stock once.
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.svc.CancelOrder(ctx, "u4", false, o4.OrderSn)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, ErrInvalidOrderState):
					t.Errorf("a racing cancel: %v", err)
				}
			}()
		}
		wg.Wait()
		if won != 1 {
			t.Errorf("%d cancels won, want 1", won)
		}
		f.poolIs(t, "after a cancel after the return", p.ID, 0, 0, 4)
		rows := f.bizRows(t, o4.OrderSn, inventory.FromPool)
		if len(rows) != 2 || rows[0].PoolID != p.ID || rows[0].ChangeNum != -1 || rows[1].PoolID != 0 || rows[1].ChangeNum != 1 ||
			rows[0].BizType != inventory.BizOrder || rows[1].BizType != inventory.BizOrder {
			t.Errorf("type-8 rows of the cancel after the return: %+v; want -1 on pool %d and +1 on main stock, under the order's key", rows, p.ID)
		}
		if got := f.stock(t, id); got != skuBefore.Stock+6 || f.mainLedger(t, id) != got {
			t.Errorf("main stock %d (ledger %d), want %d", got, f.mainLedger(t, id), skuBefore.Stock+6)
		}
		var units int64
		if err := db.SQL.QueryRow("SELECT units FROM pool_buyer WHERE pool_id = ? AND user_id = ?", p.ID, "u4").Scan(&units); err != nil || units != 0 {
			t.Errorf("u4's units of the pool after the cancel: %d (%v), want 0", units, err)
		}
		f.poolsBalance(t)

		// A refund of a paid line after the return restores to main stock.
		err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			_, err := CloseTx(ctx, tx, o1.ID, Refund, f.svc.now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rows := f.bizRows(t, o1.OrderSn, inventory.RefundRestore); len(rows) != 1 || rows[0].PoolID != 0 || rows[0].ChangeNum != 2 {
			t.Errorf("refund rows %+v, want +2 on main stock", rows)
		}
		// Its 2 units are no longer sold (issue 25: they were counted still).
		f.poolIs(t, "after a refund after the return", p.ID, 0, 0, 2)
		f.poolsBalance(t)
	})
}

// One lock-mode pool, many buyers at once: each places one or two orders
// (1 or 2 units, limit 2) and pays or cancels it at once, some payments
// racing a second notification; then the pool ends while the open orders
// are paid and cancelled. No buyer holds more than the limit, the counters
// match the orders, and both reconciliations are clean.
func TestLockModePoolUnderConcurrency(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		id := f.scarf(t, demo.ScarfColours[1])
		if _, err := inventory.New(db).Adjust(ctx, inventory.AdjustInput{ItemID: id, Delta: 80, Reason: "flash sale"}); err != nil {
			t.Fatal(err)
		}
		p := f.lockPool(t, id, 60, 2)
		const buyers = 80
		var mu sync.Mutex
		var open []*Order
		var placed, short int
		other := map[string]int{}
		// 16 at a time, some paying twice at once: the shared MariaDB's
		// max_connections is 151 for every test running on it.
		race(buyers*2, 16, func(i int) {
			user, qty := fmt.Sprint("b", i/2), int64(1+i%2)
			o, err := f.svc.Place(ctx, PlaceInput{UserID: user, IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{fromPool(id, p.ID, qty)}})
			mu.Lock()
			switch {
			case err == nil:
				placed++
			case errors.Is(err, inventory.ErrOutOfStock):
				short++
			case !errors.Is(err, inventory.ErrPoolLimitExceeded):
				other[err.Error()]++
			}
			mu.Unlock()
			if err != nil {
				return
			}
			switch i % 3 {
			case 0:
				var wg sync.WaitGroup
				for n := range 2 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						f.pay(t, o.ID, Payer{ID: int64(10*i + n), Provider: "mock", PaymentID: fmt.Sprint("p", i, "-", n), Amount: o.Amount})
					}()
				}
				wg.Wait()
			case 1:
				if _, err := f.svc.CancelOrder(ctx, user, false, o.OrderSn); err != nil {
					t.Errorf("cancel: %v", err)
				}
			default:
				mu.Lock()
				open = append(open, o)
				mu.Unlock()
			}
		})
		if len(other) != 0 {
			t.Errorf("errors other than POOL_LIMIT_EXCEEDED and OUT_OF_STOCK: %v", other)
		}
		t.Logf("%d orders placed, %d OUT_OF_STOCK, %d left open for the end", placed, short, len(open))
		f.withinLimit(t, p.ID, 2)
		f.poolsBalance(t)
		if len(open) == 0 {
			t.Fatal("no order left open: the race below would prove nothing")
		}

		// The end races the open orders' payments and cancels.
		race(len(open)+2, 16, func(i int) {
			switch {
			case i >= len(open):
				if _, err := inventory.New(db).ClosePool(ctx, p.ID); err != nil {
					t.Errorf("ClosePool: %v", err)
				}
			case i%2 == 0:
				f.pay(t, open[i].ID, Payer{ID: int64(100000 + i), Provider: "mock", PaymentID: fmt.Sprint("e", i), Amount: open[i].Amount})
			default:
				if _, err := f.svc.CancelOrder(ctx, open[i].UserID, false, open[i].OrderSn); err != nil {
					t.Errorf("cancel: %v", err)
				}
			}
		})
		var paid int64
		if err := db.SQL.QueryRow("SELECT COALESCE(SUM(ol.quantity), 0) FROM order_line ol JOIN orders o ON o.id = ol.order_id WHERE ol.pool_id = ? AND o.status = ?",
			p.ID, string(enums.OrderPaid)).Scan(&paid); err != nil {
			t.Fatal(err)
		}
		f.poolIs(t, "after the end and every order settled", p.ID, 0, 0, paid)
		if got, want := f.stock(t, id), demo.ScarfStock+80-paid; got != want {
			t.Errorf("main stock %d, want %d (everything but the %d paid)", got, want, paid)
		}
		f.withinLimit(t, p.ID, 2)
		f.poolsBalance(t)
	})
}

// withinLimit fails t when a buyer holds more of the pool than limit in
// orders that are not closed, or when a buyer's counter differs from them.
func (f *fixture) withinLimit(t *testing.T, pool, limit int64) {
	t.Helper()
	rows, err := f.db.SQL.Query(`
SELECT b.user_id, b.units, COALESCE((SELECT SUM(ol.quantity) FROM order_line ol JOIN orders o ON o.id = ol.order_id
  WHERE ol.pool_id = b.pool_id AND o.user_id = b.user_id AND o.status IN (?, ?, ?)), 0)
FROM pool_buyer b WHERE b.pool_id = ?`, string(enums.OrderUnpaid), string(enums.OrderPaid), string(enums.OrderRefunded), pool)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	buyers := 0
	for rows.Next() {
		var user string
		var counted, held int64
		if err := rows.Scan(&user, &counted, &held); err != nil {
			t.Fatal(err)
		}
		buyers++
		if held > limit || counted != held {
			t.Errorf("buyer %s holds %d units (counter %d), want at most %d and the counter equal", user, held, counted, limit)
		}
	}
	if err := rows.Err(); err != nil || buyers == 0 {
		t.Errorf("%d buyers counted (%v)", buyers, err)
	}
}

// The pool follows the goods' mode order by order: switched to
// deduct-at-order with pool orders still locked, the next pool order takes
// the pool's stock, and only what the locks leave available (stock -
// lock_stock); the locked orders still finish under their own mode.
func TestPoolFollowsAModeSwitch(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		id := f.scarf(t, demo.ScarfColours[2])
		p := f.lockPool(t, id, 4, 4)
		locked, err := f.svc.Place(ctx, PlaceInput{UserID: "early", Items: []ItemInput{fromPool(id, p.ID, 3)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec("UPDATE goods SET stock_mode = ?, version = version + 1 WHERE id = ?", string(enums.DeductAtOrder), f.ids[demo.ScarfCode]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "later", Items: []ItemInput{fromPool(id, p.ID, 2)}}); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("2 from a pool of 4 with 3 locked: %v, want OUT_OF_STOCK", err)
		}
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "later", IdempotencyKey: "one", Items: []ItemInput{fromPool(id, p.ID, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		if o.Lines[0].StockMode != enums.DeductAtOrder {
			t.Errorf("a pool order after the switch is %s, want DEDUCT_AT_ORDER", o.Lines[0].StockMode)
		}
		f.poolIs(t, "after a deduct order beside the locks", p.ID, 3, 3, 1)
		f.poolsBalance(t)
		if !f.pay(t, locked.ID, Payer{ID: 1, Provider: "mock", PaymentID: "early", Amount: locked.Amount}) {
			t.Fatal("the locked order was not paid")
		}
		f.poolIs(t, "after paying the locked order", p.ID, 0, 0, 4)
		if rows := f.bizRows(t, locked.OrderSn, inventory.PaymentDeduct); len(rows) != 1 || rows[0].PoolID != p.ID {
			t.Errorf("payment rows %+v, want one on pool %d", rows, p.ID)
		}
		f.poolsBalance(t)
	})
}
