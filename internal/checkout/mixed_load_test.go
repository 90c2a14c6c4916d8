package checkout

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Every write path beside every other on one database, as a shop runs
// them: buyers on two instances placing orders of one to three SKUs of
// several goods (deduct-at-order and lock-at-order), cancelling a third of
// them at once; both instances' timeout closers; admins creating goods and
// editing the descriptions and SKU prices of the goods being bought. While
// the database is up no request may answer UNAVAILABLE, and hardly a
// transaction may even deadlock (or time out waiting for a lock): every path takes its
// locks in the one order (goods, SKUs ascending, pools, listing rows last,
// each only its own goods' rows), so a deadlock here is a path out of order.
// (A deadlock that happened anyway would be retried inside the service,
// store.WithTx, before anyone saw it.) Afterwards the stock, the locks, the
// ledger and the listing reconcile.
//
// At 52fadce: 14, 22 and 20 deadlocks on MariaDB in three runs (the listing's
// restock locking every listing row, an edit of the demo's 500-SKU goods
// locking every SKU row, edits deleting and inserting their listing rows);
// the soak of issue 38 saw them answer UNAVAILABLE ("cancelOrder … marking
// the goods of SKUs [1 8 10] in stock: Error 1213"). Now none.
func TestMixedLoadAnswersNoUnavailable(t *testing.T) {
	const (
		ttl      = time.Second
		interval = 200 * time.Millisecond
		load     = 8 * time.Second
		buyers   = 12 // per instance
		admins   = 8
	)
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			f, svcs := instances(t, b, path{"group", true}, 2)
			for _, s := range svcs {
				s.cfg.OrderTTL = ttl
				s.now = func() time.Time { return time.Now().UTC() }
			}
			ctx := context.Background()
			cat := catalog.New(f.db, catalog.DefaultConfig())
			t.Cleanup(cat.Close)
			var skus []int64
			for code, n := range map[string]int{demo.TShirtCode: 4, demo.BagCode: 1, demo.ScarfCode: 2, demo.ShoeCode: 2} {
				ids, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[code])).Order(sku.ByID()).Limit(n).IDs(ctx)
				if err != nil {
					t.Fatal(err)
				}
				skus = append(skus, ids...)
			}
			const opening = 1_000_000
			for _, id := range skus {
				f.setStock(t, id, opening)
			}
			edited := []int64{f.ids[demo.TShirtCode], f.ids[demo.BagCode]}

			var (
				requests, unavailable, unexpected atomic.Int64
				mu                                sync.Mutex
				firsts                            []string
				retries                           sync.Map // cause → *atomic.Int64
			)
			oldRetry := store.OnRetry
			store.OnRetry = func(cause string) {
				n, _ := retries.LoadOrStore(cause, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
			t.Cleanup(func() { store.OnRetry = oldRetry })
			// answer records one request's outcome; expected are the
			// business answers this load may give.
			answer := func(what string, err error, expected ...error) {
				requests.Add(1)
				switch {
				case err == nil || isAny(err, expected...):
					return
				case errors.Is(err, store.ErrUnavailable):
					unavailable.Add(1)
				default:
					unexpected.Add(1)
				}
				mu.Lock()
				if len(firsts) < 8 {
					firsts = append(firsts, what+": "+err.Error())
				}
				mu.Unlock()
			}

			until := time.Now().Add(load)
			var wg sync.WaitGroup
			for i, s := range svcs {
				for w := range buyers {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(i), uint64(w)))
						for n := 0; time.Now().Before(until); n++ {
							var items []ItemInput
							for _, k := range r.Perm(len(skus))[:1+r.IntN(3)] {
								items = append(items, one(skus[k], 1+int64(r.IntN(2))))
							}
							user := fmt.Sprint("buyer-", i, "-", w)
							o, err := s.Place(ctx, PlaceInput{UserID: user, Items: items, IdempotencyKey: fmt.Sprint("mixed-", i, "-", w, "-", n)})
							answer("placeOrder", err)
							if err == nil && n%3 == 0 {
								_, err := s.CancelOrder(ctx, user, false, o.OrderSn)
								answer("cancelOrder", err, ErrInvalidOrderState) // the closer may have been first
							}
						}
					})
				}
			}
			for a := range admins {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(99, uint64(a)))
					for n := 0; time.Now().Before(until); n++ {
						switch n % 3 {
						case 0:
							_, err := cat.Create(ctx, catalog.CreateInput{Name: fmt.Sprint("混合 ", a, "-", n), Code: fmt.Sprint("MIXED-", a, "-", n),
								Status: enums.GoodsOnShelf, Specs: []catalog.SpecInput{{Name: "色", Values: []string{"红", "蓝"}}},
								DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("9.90"), Stock: 5}})
							answer("createGoods", err)
						case 1:
							id := skus[r.IntN(len(skus))]
							row, err := f.db.Client.Sku.Get(ctx, id)
							if err != nil {
								t.Error(err)
								return
							}
							price := money.Money(int64(row.SellPrice) + 1 - 2*int64(r.IntN(2)))
							_, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: row.Version, SellPrice: &price})
							answer("updateSku", err, errs.VersionConflict)
						case 2:
							id := edited[r.IntN(len(edited))]
							g, err := f.db.Client.Goods.Get(ctx, id)
							if err != nil {
								t.Error(err)
								return
							}
							desc := fmt.Sprint("edited ", a, "-", n)
							_, err = cat.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: id, ExpectedVersion: g.Version, Content: catalog.Content{Description: &desc}})
							answer("updateGoods", err, errs.VersionConflict)
						}
					}
				})
			}
			cctx, stop := context.WithCancel(ctx)
			var closers sync.WaitGroup
			for i, s := range svcs {
				closers.Go(func() {
					tick := time.NewTicker(interval)
					defer tick.Stop()
					for {
						_, err := s.CloseExpired(cctx)
						if cctx.Err() != nil {
							return
						}
						answer(fmt.Sprint("closer ", i), err)
						select {
						case <-cctx.Done():
							return
						case <-tick.C:
						}
					}
				})
			}
			wg.Wait()
			// Every order left is closed by the closers within a few passes.
			deadline := time.Now().Add(ttl + 30*time.Second)
			for {
				var unpaid int
				if err := f.db.SQL.QueryRow("SELECT COUNT(*) FROM orders WHERE status = ?", string(enums.OrderUnpaid)).Scan(&unpaid); err != nil {
					t.Fatal(err)
				}
				if unpaid == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d orders still unpaid 30 s after the load", unpaid)
				}
				time.Sleep(interval) // the closers' period
			}
			stop()
			closers.Wait()

			var causes []string
			retries.Range(func(k, v any) bool {
				causes = append(causes, fmt.Sprint(k, "=", v.(*atomic.Int64).Load()))
				return true
			})
			t.Logf("%d requests; UNAVAILABLE %d, unexpected %d; transactions retried: %v", requests.Load(), unavailable.Load(), unexpected.Load(), causes)
			// Not yet zero: about one MariaDB run in ten under CI's load
			// still retries a few deadlocks (6 seen, of some 2,000
			// transactions; the path is not found yet — a suspect is the
			// sold-out flip of two SKUs of one goods). Each was retried
			// inside the service, and the hard claim below (no UNAVAILABLE)
			// held. Out-of-order paths as at 52fadce retried 14–22 a run;
			// more than maxRetried fails.
			const maxRetried = 8
			for _, cause := range []string{"deadlock", "lock_wait", "serialization"} {
				if n, ok := retries.Load(cause); ok && n.(*atomic.Int64).Load() > maxRetried {
					t.Errorf("%d transactions retried after a %s (at most %d): some path takes its locks out of order", n.(*atomic.Int64).Load(), cause, maxRetried)
				}
			}
			if unavailable.Load() > 0 || unexpected.Load() > 0 {
				t.Errorf("%d answered UNAVAILABLE and %d something unexpected while the database was up; first: \n%s",
					unavailable.Load(), unexpected.Load(), strings.Join(firsts, "\n"))
			}

			// Nothing was paid: every unit is back, every lock released, and
			// the ledger and the listing agree with the rows.
			for _, id := range skus {
				row, err := f.db.Client.Sku.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if row.Stock != opening || row.LockStock != 0 || f.ledgerSum(t, id, 0) != row.Stock {
					t.Errorf("SKU %d: stock %d, locked %d, ledger %d; want %d, 0, %d", id, row.Stock, row.LockStock, f.ledgerSum(t, id, 0), opening, opening)
				}
			}
			if diffs, err := inventory.New(f.db).Reconcile(ctx, 10); err != nil || len(diffs) > 0 {
				t.Errorf("stock reconciliation: %v, %v", diffs, err)
			}
			if diffs, err := listing.Reconcile(ctx, f.db.Client, 10); err != nil || len(diffs) > 0 {
				t.Errorf("listing reconciliation: %v, %v", diffs, err)
			}
		})
	}
}
