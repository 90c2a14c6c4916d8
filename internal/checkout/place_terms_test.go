package checkout

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// The plain path reads prices and status before its transaction; an edit
// committed between that read and the CAS must decide the order as a fresh
// read would (issue 15, 7.3). Each case commits its edit from the "resolved"
// hook, on another connection, after the read and before the transaction.
// Two SKUs per order keep it on the plain path with the group path on.
func TestPlainPathSellsAtTheTermsCurrentAtItsCAS(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		blackL, navyL := f.skuID(t, "黑色,L"), f.skuID(t, "藏青,L") // navyL: the higher id
		goods := f.ids[demo.TShirtCode]
		exec := func(q string, args ...any) {
			if _, err := db.SQL.Exec(q, args...); err != nil {
				t.Error(err)
			}
		}
		n := 0
		placeAfter := func(edit func()) (*Order, error) {
			n++
			once := true
			f.svc.hook = func(stage string) error {
				if stage == "resolved" && once {
					once = false
					edit()
				}
				return nil
			}
			defer func() { f.svc.hook = nil }()
			return f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", n), Items: []ItemInput{one(blackL, 1), one(navyL, 1)}})
		}
		price := func(id int64) int64 {
			var p int64
			if err := db.SQL.QueryRow("SELECT sell_price FROM sku WHERE id = ?", id).Scan(&p); err != nil {
				t.Fatal(err)
			}
			return p
		}

		o, err := placeAfter(func() { exec("UPDATE sku SET sell_price = sell_price + 100 WHERE id = ?", navyL) })
		if err != nil {
			t.Fatalf("after a price change: %v", err)
		}
		if want := price(blackL) + price(navyL); int64(o.Amount) != want {
			t.Errorf("after a price change: amount %d, want %d (the price at the CAS)", o.Amount, want)
		}
		stored := 0
		if err := db.SQL.QueryRow("SELECT amount FROM orders WHERE order_sn = ?", o.OrderSn).Scan(&stored); err != nil || int64(stored) != int64(o.Amount) {
			t.Errorf("stored amount %d (%v), answered %d", stored, err, o.Amount)
		}

		o, err = placeAfter(func() { exec("UPDATE goods SET name = ? WHERE id = ?", "改名的T恤", goods) })
		if err != nil {
			t.Fatalf("after a rename: %v", err)
		}
		var name string
		if err := db.SQL.QueryRow("SELECT goods_name FROM order_line WHERE order_id = ? AND item_id = ?", o.ID, blackL).Scan(&name); err != nil || name != "改名的T恤" {
			t.Errorf("after a rename: the line says %q (%v), want the new name", name, err)
		}

		for _, off := range []struct{ set, reset string }{
			{"UPDATE sku SET status = 'DISABLED' WHERE id = ?", "UPDATE sku SET status = 'ENABLED' WHERE id = ?"},
			{"UPDATE goods SET status = 'OFF_SHELF' WHERE id = (SELECT goods_id FROM sku WHERE id = ?)", "UPDATE goods SET status = 'ON_SHELF' WHERE id = (SELECT goods_id FROM sku WHERE id = ?)"},
		} {
			before := f.counts(t)
			stock := f.stock(t, blackL)
			if _, err := placeAfter(func() { exec(off.set, navyL) }); !errors.Is(err, ErrSkuUnavailable) {
				t.Errorf("after %q: err = %v, want SKU_UNAVAILABLE", off.set, err)
			}
			if after := f.counts(t); !equalCounts(before, after) {
				t.Errorf("after %q: rows changed by a refused order: %v → %v", off.set, before, after)
			}
			if got := f.stock(t, blackL); got != stock {
				t.Errorf("after %q: the other SKU's stock %d → %d", off.set, stock, got)
			}
			exec(off.reset, navyL)
		}

		// Stock taken between the read and the CAS: OUT_OF_STOCK, nothing written.
		before := f.counts(t)
		if _, err := placeAfter(func() { exec("UPDATE sku SET stock = 0 WHERE id = ?", navyL) }); !errors.Is(err, ErrOutOfStock) {
			t.Errorf("after the stock went: err = %v, want OUT_OF_STOCK", err)
		}
		if after := f.counts(t); !equalCounts(before, after) {
			t.Errorf("rows changed by a refused order: %v → %v", before, after)
		}
	})
}
