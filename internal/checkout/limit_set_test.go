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
							if _, err := cat.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: bag, ExpectedVersion: g.Version, PurchaseLimit: ptr(int64(2))}); err != nil {
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
