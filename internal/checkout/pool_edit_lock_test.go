package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"entgo.io/ent/dialect"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// A pool's close, its orders' payments and cancels, and an admin editing
// the pool's SKU, all at once (issue 26's lock order: goods → SKU → pool →
// listing). The close, a release or restore after the pool's return and a
// payment (DeductPool, then the pool lines' volume) took a pool row before
// the goods lock, so a catalog edit holding the goods and waiting for a
// sale's SKU row, the sale waiting for the pool row, and the close waiting
// for the goods deadlocked three ways on MariaDB. Every pool path now takes
// the goods lock first: no transaction is retried.
func TestPoolPathsBesideEditsDoNotDeadlock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"plain", false})
		cat := catalog.New(db, catalog.DefaultConfig())
		defer cat.Close()
		id := f.scarf(t, demo.ScarfColours[1])
		if _, err := inventory.New(db).Adjust(ctx, inventory.AdjustInput{ItemID: id, Delta: 10_000, Reason: "flash sales"}); err != nil {
			t.Fatal(err)
		}

		var retries atomic.Int64
		saved := store.OnRetry
		store.OnRetry = func(cause string) { retries.Add(1); saved(cause) }
		defer func() { store.OnRetry = saved }()

		var (
			placed, paid, cancelled, edits atomic.Int64
			failed                         atomic.Value
		)
		fail := func(what string, err error) { failed.CompareAndSwap(nil, fmt.Sprintf("%s: %v", what, err)) }
		for round := range 8 {
			p := f.lockPool(t, id, 40, 100)
			var (
				wg       sync.WaitGroup
				done     atomic.Bool
				closeNow = make(chan struct{})
				ordered  atomic.Int64
			)
			// The editor: the pool's SKU's price, from a fresh read each
			// time, until the round's buyers are done.
			wg.Go(func() {
				for i := 0; !done.Load(); i++ {
					cur, err := db.Client.Sku.Get(ctx, id)
					if err != nil {
						fail("read", err)
						return
					}
					price := money.Money(10_000 + i%100)
					if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: cur.Version, SellPrice: &price}); err != nil && !errors.Is(err, errs.VersionConflict) {
						fail("updateSku", err)
						return
					}
					edits.Add(1)
				}
			})
			// The closer: once a third of the orders are placed, so payments
			// and cancels run before, beside and after the pool's return.
			wg.Go(func() {
				<-closeNow
				if _, err := inventory.New(db).ClosePool(ctx, p.ID); err != nil {
					fail("ClosePool", err)
				}
			})
			var buyers sync.WaitGroup
			for b := range 4 {
				buyers.Go(func() {
					for n := range 6 {
						user := fmt.Sprint("r", round, "-b", b)
						o, err := f.svc.Place(ctx, PlaceInput{UserID: user, IdempotencyKey: fmt.Sprint("k", round, "-", b, "-", n), Items: []ItemInput{fromPool(id, p.ID, 1)}})
						if ordered.Add(1) == 8 {
							close(closeNow)
						}
						switch {
						case errors.Is(err, inventory.ErrPoolNotActive) || errors.Is(err, inventory.ErrOutOfStock):
							continue
						case err != nil:
							fail("place", err)
							return
						}
						placed.Add(1)
						if n%2 == 0 {
							f.pay(t, o.ID, Payer{ID: int64(round*1000 + b*10 + n), Provider: "mock", PaymentID: fmt.Sprint("p", round, "-", b, "-", n), Amount: o.Amount})
							paid.Add(1)
						} else if _, err := f.svc.CancelOrder(ctx, user, false, o.OrderSn); err != nil {
							fail("cancel", err)
							return
						} else {
							cancelled.Add(1)
						}
					}
				})
			}
			buyers.Wait()
			done.Store(true)
			wg.Wait()
			if fl := failed.Load(); fl != nil {
				t.Fatalf("round %d: %v", round, fl)
			}
		}
		t.Logf("8 pools closed beside %d pool orders (%d paid, %d cancelled) and %d price edits: %d retries",
			placed.Load(), paid.Load(), cancelled.Load(), edits.Load(), retries.Load())
		if n := retries.Load(); n != 0 {
			t.Errorf("%d transactions retried (deadlocks between pool paths, sales and edits), want none", n)
			if db.Dialect.Name() == dialect.MySQL {
				t.Logf("the latest deadlock in this database:\n%s", latestDeadlock(t, db))
			}
		}
		f.poolsBalance(t)
	})
}
