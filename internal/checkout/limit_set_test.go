package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/testsupport/testdb"
)

// A purchase limit set while one customer's orders race it (40 orders of
// one unit, 16 at a time, the limit 2 set once 5 stand): the orders that
// committed before the edit stand uncounted until it counts them, every
// order after it is checked against what is held, so past the set no order
// stands beyond the limit; at the end every standing line is counted and
// the purchase count is the standing units. On the plain and group paths.
func TestPurchaseLimitSetWhileOrdersRace(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		cfg := catalog.DefaultConfig()
		cfg.OnPurchaseLimit = CountHeld
		cat := catalog.New(db, cfg)
		t.Cleanup(cat.Close)
		bag := f.ids[demo.BagCode]
		item, err := db.Client.Sku.Query().Where(sku.GoodsID(bag)).FirstID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		f.setStock(t, item, 1000)
		var placed, refused atomic.Int64
		var once sync.Once
		var setAt atomic.Int64 // orders placed when the edit committed
		var wg sync.WaitGroup
		race(40, 16, func(i int) {
			_, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: fmt.Sprint("k", i)})
			switch {
			case err == nil:
				if placed.Add(1) == 5 {
					once.Do(func() {
						wg.Go(func() {
							g, err := cat.Goods(ctx, catalog.Viewer{Admin: true}, bag)
							if err != nil {
								t.Error(err)
								return
							}
							if _, err := cat.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: bag, ExpectedVersion: g.Version, PurchaseLimit: new(int64(2))}); err != nil {
								t.Errorf("setting the limit: %v", err)
							}
							setAt.Store(placed.Load())
						})
					})
				}
			case errors.Is(err, promo.ErrPurchaseLimit):
				refused.Add(1)
			default:
				t.Errorf("order %d: %v", i, err)
			}
		})
		wg.Wait()
		var standing, uncounted, units int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT COALESCE(SUM(l.quantity), 0), COALESCE(SUM(CASE WHEN l.purchase_counted = TRUE THEN 0 ELSE 1 END), 0)
FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.goods_id = ? AND o.user_id = ? AND o.status NOT IN ('CLOSED', 'REFUNDED')`, bag, "alice").Scan(&standing, &uncounted); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRowContext(ctx, "SELECT units FROM purchase_count WHERE goods_id = ? AND user_id = ?", bag, "alice").Scan(&units); err != nil {
			t.Fatal(err)
		}
		t.Logf("%d placed (%d when the limit was set), %d refused", placed.Load(), setAt.Load(), refused.Load())
		if uncounted != 0 || units != standing || standing != placed.Load() || placed.Load()+refused.Load() != 40 {
			t.Errorf("%d standing units, %d uncounted lines, purchase count %d, %d placed, %d refused; want every line counted, the count the standing units",
				standing, uncounted, units, placed.Load(), refused.Load())
		}
		// Past the set, nothing stood beyond the limit: at most the orders
		// committed meanwhile (in flight when it was set) plus none after.
		if setAt.Load() >= 2 && placed.Load() > setAt.Load()+16 {
			t.Errorf("%d placed, %d when the limit was set: orders placed after the set passed it", placed.Load(), setAt.Load())
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: "after"}); !errors.Is(err, promo.ErrPurchaseLimit) {
			t.Errorf("an order after it all: %v, want PURCHASE_LIMIT_EXCEEDED", err)
		}
		if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v", diffs, err)
		}
	})
}

// A purchase limit set between a batch's read (no limit) and its statement:
// the batch's goods guard carries the limit it read, so the statement
// finds the goods changed, the batch runs again from a fresh read, and the
// order of a customer who already holds 3 is PURCHASE_LIMIT_EXCEEDED under
// the new limit of 2; it never stands uncounted. Carol, holding nothing,
// orders in the same batch and is placed, counted.
func TestLimitSetBetweenTheBatchsReadAndItsStatement(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"group", true})
		cfg := catalog.DefaultConfig()
		cfg.OnPurchaseLimit = CountHeld
		cat := catalog.New(db, cfg)
		t.Cleanup(cat.Close)
		bag := f.ids[demo.BagCode]
		item, err := db.Client.Sku.Query().Where(sku.GoodsID(bag)).FirstID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if _, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: fmt.Sprint("held", i)}); err != nil {
				t.Fatal(err)
			}
		}
		var once sync.Once
		f.svc.hook = func(stage string) error {
			if stage == "unlocked" {
				once.Do(func() {
					// The limit set on another connection, committed.
					g, err := cat.Goods(ctx, catalog.Viewer{Admin: true}, bag)
					if err == nil {
						_, err = cat.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: bag, ExpectedVersion: g.Version, PurchaseLimit: new(int64(2))})
					}
					if err != nil {
						t.Errorf("setting the limit: %v", err)
					}
				})
			}
			return nil
		}
		hold(f, item)
		orders, errs := enqueue(t, f, item, []PlaceInput{
			{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: "a"},
			{UserID: "carol", Items: []ItemInput{one(item, 1)}, IdempotencyKey: "c"},
		})()
		checkOutcomes(t, orders, errs, promo.ErrPurchaseLimit, nil)
		var standing, uncounted int64
		if err := db.SQL.QueryRowContext(ctx, `SELECT COALESCE(SUM(l.quantity), 0), COALESCE(SUM(CASE WHEN l.purchase_counted = TRUE THEN 0 ELSE 1 END), 0)
FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.goods_id = ? AND o.status NOT IN ('CLOSED', 'REFUNDED')`, bag).Scan(&standing, &uncounted); err != nil {
			t.Fatal(err)
		}
		if standing != 4 || uncounted != 0 {
			t.Errorf("%d units standing, %d lines uncounted; want 4 (alice's 3, carol's 1), 0", standing, uncounted)
		}
		if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v", diffs, err)
		}
	})
}
