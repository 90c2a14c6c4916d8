package checkout

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Issue 25 §2: a lock-at-order order holds 2 units of a scarf SKU with 3 on
// hand. A count or a set below those 2 (stocktake 0 and 1, setStock 1) is
// OUT_OF_STOCK naming the 2 locked and changes nothing; a count of exactly
// the locked 2 goes through. The order's payment then deducts its lock.
// §7: every other scarf counted to 0 and this one fully locked, the scarf
// is out of stock in the listing, and a stocktake that keeps its stock
// (counted 2 of 2, all locked) leaves it out of stock.
func TestCountsBelowLockedStock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		inv := inventory.New(db)
		id := f.scarf(t, demo.ScarfColours[0])
		for _, c := range demo.ScarfColours[1:] {
			if _, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: f.scarf(t, c), Counted: 0, Reason: "sold elsewhere"}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: id, Counted: 3, Reason: "three left"}); err != nil {
			t.Fatal(err)
		}
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "buyer", Items: []ItemInput{one(id, 2)}})
		if err != nil {
			t.Fatal(err)
		}
		if f.locked(t, id) != 2 {
			t.Fatalf("locked %d, want 2", f.locked(t, id))
		}
		inStock := func(when string, want bool) {
			t.Helper()
			var n, in int
			if err := db.SQL.QueryRow("SELECT COUNT(*), COALESCE(SUM(CASE WHEN in_stock THEN 1 ELSE 0 END), 0) FROM goods_listing WHERE goods_id = ?", f.ids[demo.ScarfCode]).Scan(&n, &in); err != nil {
				t.Fatal(err)
			}
			if n == 0 || (in == n) != want || (in == 0) == want {
				t.Errorf("%s: %d of %d listing rows in stock, want in stock %v", when, in, n, want)
			}
			if d, err := listing.Reconcile(ctx, db.Client, 100); err != nil || len(d) != 0 {
				t.Errorf("%s: listing.Reconcile = %v, %v", when, d, err)
			}
		}
		inStock("one unit available", true)

		before := f.counts(t)
		s0 := db.Client.Sku.GetX(ctx, id)
		for _, try := range []struct {
			name string
			do   func() error
		}{
			{"stocktake 0", func() error {
				_, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: id, Counted: 0, Reason: "count"})
				return err
			}},
			{"stocktake 1", func() error {
				_, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: id, Counted: 1, Reason: "count"})
				return err
			}},
			{"setStock 1", func() error {
				_, err := inv.SetStock(ctx, inventory.SetStockInput{ItemID: id, Stock: 1, ExpectedVersion: s0.StockVersion, Reason: "form"})
				return err
			}},
		} {
			err := try.do()
			if !errors.Is(err, inventory.ErrOutOfStock) || !strings.Contains(err.Error(), "2 units locked") {
				t.Errorf("%s below 2 locked: %v, want OUT_OF_STOCK naming the 2 locked", try.name, err)
			}
		}
		if s := db.Client.Sku.GetX(ctx, id); s.Stock != 3 || s.LockStock != 2 || s.StockVersion != s0.StockVersion {
			t.Errorf("after the refusals: stock %d, locked %d, stock version %d; want 3, 2, %d", s.Stock, s.LockStock, s.StockVersion, s0.StockVersion)
		}
		if after := f.counts(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the refusals wrote rows: %v, before %v", after, before)
		}

		// Counted at the locked 2: allowed, nothing available.
		if _, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: id, Counted: 2, Reason: "count"}); err != nil {
			t.Fatalf("stocktake at the locked quantity: %v", err)
		}
		inStock("fully locked", false)
		// A count that keeps the stock of the fully locked SKU.
		if _, err := inv.Stocktake(ctx, inventory.StocktakeInput{ItemID: id, Counted: 2, Reason: "count again"}); err != nil {
			t.Fatal(err)
		}
		inStock("fully locked, counted again", false)

		if !f.pay(t, o.ID, Payer{ID: 1, Provider: "mock", PaymentID: "p-1", Amount: o.Amount}) {
			t.Fatal("the payment for the held lock was refused")
		}
		if s := db.Client.Sku.GetX(ctx, id); s.Stock != 0 || s.LockStock != 0 {
			t.Errorf("after the payment: stock %d, locked %d, want 0 and 0", s.Stock, s.LockStock)
		}
		f.clean(t, "after the payment")
		inStock("sold out", false)
	})
}
