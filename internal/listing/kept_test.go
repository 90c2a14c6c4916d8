package listing_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/goodslisting"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// kept is the listing's values of one goods (scope All).
type kept struct {
	price   int64
	sales   int64
	inStock bool
	status  enums.GoodsStatus
}

func keptOf(t *testing.T, db *store.DB, id int64) kept {
	t.Helper()
	r, err := db.Client.GoodsListing.Query().Where(goodslisting.GoodsID(id), goodslisting.Scope(listing.All)).Only(context.Background())
	must.NoErr(t, err)
	return kept{r.MinPrice, r.Sales, r.InStock, r.Status}
}

// reconciled fails the test when any listing row differs from the truth.
func reconciled(t *testing.T, db *store.DB, step string) {
	t.Helper()
	diffs, err := listing.Reconcile(context.Background(), db.Client, 100)
	must.NoErr(t, err)
	for _, d := range diffs {
		t.Errorf("%s: %s", step, d)
	}
}

func pay(t *testing.T, db *store.DB, o *checkout.Order) {
	t.Helper()
	must.NoErr(t, store.WithTx(context.Background(), db, func(ctx context.Context, tx *ent.Tx) error {
		won, err := checkout.PayTx(ctx, tx, o.ID, checkout.Payer{Provider: "test", PaymentID: o.OrderSn, Amount: o.Amount}, time.Now())
		if err == nil && !won {
			err = fmt.Errorf("order %s was not paid", o.OrderSn)
		}
		return err
	}))
}

// TestKeptValuesFollowEveryChange walks one goods of each stock mode through
// SKU price edits and disables, orders that empty a SKU, cancels, payments,
// adjustments, status and category edits, on both checkout paths (on
// MariaDB the group path's one-statement batch), and after every step
// compares the listing with a recomputation (Reconcile) and with the
// values expected by hand.
func TestKeptValuesFollowEveryChange(t *testing.T) {
	for _, group := range []bool{false, true} {
		t.Run(fmt.Sprintf("group=%v", group), func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				cat := catalog.New(db, catalog.DefaultConfig())
				t.Cleanup(cat.Close)
				cfg := checkout.DefaultConfig()
				cfg.GroupCommit = group
				co := checkout.New(db, cfg)
				inv := inventory.New(db)
				m := money.MustParse
				want := func(step string, id int64, k kept) {
					t.Helper()
					reconciled(t, db, step)
					if got := keptOf(t, db, id); got != k {
						t.Errorf("%s: listing %+v, want %+v", step, got, k)
					}
				}
				on := true
				g, err := cat.Create(ctx, catalog.CreateInput{Name: "纯棉圆领T恤", Code: "TEE", Status: enums.GoodsOnShelf,
					Specs:      []catalog.SpecInput{{Name: "尺码", Values: []string{"S", "M", "L"}}},
					DefaultSku: catalog.SkuTerms{SellPrice: m("20.00")},
					Skus: []catalog.SkuOverride{
						{Values: []string{"S"}, SkuTerms: catalog.SkuTerms{SellPrice: m("10.00"), Stock: 1}, Enabled: &on},
						{Values: []string{"L"}, SkuTerms: catalog.SkuTerms{SellPrice: m("30.00"), Stock: 2}, Enabled: &on},
					}})
				must.NoErr(t, err)
				skus := g.SkuList(true) // S, M, L in id order
				s, mid, l := skus[0], skus[1], skus[2]
				want("created", g.ID, kept{1000, 0, true, enums.GoodsOnShelf})

				_, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: s.Version, SellPrice: new(m("5.00"))})
				must.NoErr(t, err)
				want("S priced 5.00", g.ID, kept{500, 0, true, enums.GoodsOnShelf})
				disabled := enums.SkuDisabled
				_, err = cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: s.ID, ExpectedVersion: s.Version + 1, Status: &disabled})
				must.NoErr(t, err)
				want("S disabled", g.ID, kept{2000, 0, true, enums.GoodsOnShelf})

				buyers := 0
				order := func(item, n int64) *checkout.Order {
					t.Helper()
					buyers++ // one buyer per order: the same order again would be a replay
					o, err := co.Place(ctx, checkout.PlaceInput{UserID: fmt.Sprintf("u%d", buyers), Items: []checkout.ItemInput{{ItemID: &item, Quantity: n}}})
					must.NoErr(t, err)
					return o
				}
				o := order(l.ID, 2)
				want("L sold out (M has none, S disabled)", g.ID, kept{2000, 0, false, enums.GoodsOnShelf})
				_, err = co.CancelOrder(ctx, o.UserID, false, o.OrderSn)
				must.NoErr(t, err)
				want("cancelled", g.ID, kept{2000, 0, true, enums.GoodsOnShelf})
				o = order(l.ID, 1)
				pay(t, db, o)
				want("one paid", g.ID, kept{2000, 1, true, enums.GoodsOnShelf})
				pay2 := order(l.ID, 1)
				want("L emptied again", g.ID, kept{2000, 1, false, enums.GoodsOnShelf})
				pay(t, db, pay2)
				want("paid", g.ID, kept{2000, 2, false, enums.GoodsOnShelf})
				_, err = inv.Adjust(ctx, inventory.AdjustInput{ItemID: mid.ID, Delta: 3, Reason: "found"})
				must.NoErr(t, err)
				want("M adjusted +3", g.ID, kept{2000, 2, true, enums.GoodsOnShelf})
				_, err = inv.Adjust(ctx, inventory.AdjustInput{ItemID: mid.ID, Delta: -3, Reason: "lost"})
				must.NoErr(t, err)
				want("M adjusted -3", g.ID, kept{2000, 2, false, enums.GoodsOnShelf})
				_, err = cat.SetStatus(ctx, g.ID, enums.GoodsOffShelf)
				must.NoErr(t, err)
				want("off shelf", g.ID, kept{2000, 2, false, enums.GoodsOffShelf})

				// Lock at order: the lock empties, a cancel releases, a payment deducts.
				scarf, err := cat.Create(ctx, catalog.CreateInput{Name: "真丝围巾", Status: enums.GoodsOnShelf, StockMode: enums.LockAtOrder,
					DefaultSku: catalog.SkuTerms{SellPrice: m("99.00"), Stock: 1}})
				must.NoErr(t, err)
				item := scarf.SkuList(true)[0].ID
				want("scarf created", scarf.ID, kept{9900, 0, true, enums.GoodsOnShelf})
				o = order(item, 1)
				want("scarf locked", scarf.ID, kept{9900, 0, false, enums.GoodsOnShelf})
				_, err = co.CancelOrder(ctx, o.UserID, false, o.OrderSn)
				must.NoErr(t, err)
				want("scarf released", scarf.ID, kept{9900, 0, true, enums.GoodsOnShelf})
				o = order(item, 1)
				pay(t, db, o)
				want("scarf paid", scarf.ID, kept{9900, 1, false, enums.GoodsOnShelf})

				// A category and a move of the category: the scopes follow.
				top, err := cat.CreateCategory(ctx, catalog.CategoryInput{Name: "Clothes"})
				must.NoErr(t, err)
				sub, err := cat.CreateCategory(ctx, catalog.CategoryInput{Name: "Tops"})
				must.NoErr(t, err)
				v, err := cat.Goods(ctx, catalog.Viewer{Admin: true}, g.ID)
				must.NoErr(t, err)
				_, err = cat.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: g.ID, ExpectedVersion: v.Version, CategoryID: &sub.ID})
				must.NoErr(t, err)
				reconciled(t, db, "into Tops")
				_, err = cat.UpdateCategory(ctx, catalog.CategoryEdit{ID: sub.ID, ParentID: &top.ID})
				must.NoErr(t, err)
				reconciled(t, db, "Tops under Clothes")
				if n, err := db.Client.GoodsListing.Query().Where(goodslisting.GoodsID(g.ID)).Count(ctx); err != nil || n != 3 {
					t.Errorf("T-shirt under Clothes/Tops: %d listing rows (%v), want 3 (all, Tops, Clothes)", n, err)
				}
			})
		})
	}
}

// TestKeptValuesUnderConcurrentOrders: 48 buyers at once for the last 12
// units of a goods spread over 4 SKUs (group commit on: batches on both
// backends), then every order cancelled at once. The goods is out of stock
// exactly when every unit is sold, in stock after the cancels, and the
// listing equals the recomputation after each wave.
func TestKeptValuesUnderConcurrentOrders(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		co := checkout.New(db, checkout.DefaultConfig())
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "跑鞋", Status: enums.GoodsOnShelf,
			Specs:      []catalog.SpecInput{{Name: "尺码", Values: []string{"40", "41", "42", "43"}}},
			DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("300.00"), Stock: 3}})
		must.NoErr(t, err)
		skus := g.SkuList(false)
		var mu sync.Mutex
		var placed []*checkout.Order
		var wg sync.WaitGroup
		for i := range 48 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				item := skus[i%4].ID
				o, err := co.Place(ctx, checkout.PlaceInput{UserID: fmt.Sprintf("u%d", i), Items: []checkout.ItemInput{{ItemID: &item, Quantity: 1}}})
				if err == nil {
					mu.Lock()
					placed = append(placed, o)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(placed) != 12 {
			t.Fatalf("%d orders placed, want 12 (3 units on each of 4 SKUs)", len(placed))
		}
		reconciled(t, db, "sold out")
		if k := keptOf(t, db, g.ID); k.inStock {
			t.Errorf("sold out, yet listed in stock")
		}
		for _, o := range placed {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := co.CancelOrder(ctx, o.UserID, false, o.OrderSn); err != nil {
					t.Errorf("cancel %s: %v", o.OrderSn, err)
				}
			}()
		}
		wg.Wait()
		reconciled(t, db, "all cancelled")
		if k := keptOf(t, db, g.ID); !k.inStock {
			t.Errorf("every unit back, yet listed out of stock")
		}
	})
}
