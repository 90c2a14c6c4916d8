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

// The group path decides a batch from what it last read of the SKU (MySQL,
// lastRead); every change made since, by anyone, still decides the next
// order exactly as a fresh read would: a new price, a new name, taken off
// sale, a restock, stock taken elsewhere. Each step is one lone order (a
// batch of one) after a change made on another connection.
func TestGroupLastReadIsChecked(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		f.svc.loneOnPlain = false // what is checked is the batch's decision
		ctx := context.Background()
		id := f.skuID(t, "黑色,L")
		goods := f.ids[demo.TShirtCode]
		f.setStock(t, id, 10)
		n := 0
		place := func(qty int64) (*Order, error) {
			t.Helper()
			n++
			return f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", n), Items: []ItemInput{one(id, qty)}})
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := db.SQL.Exec(q, args...); err != nil {
				t.Fatal(err)
			}
		}
		first, err := place(1)
		if err != nil {
			t.Fatal(err)
		}
		if sb, ok := f.svc.batcher.(*serverBatcher); ok && !sb.lastRead.rows.Contains(id) {
			t.Fatal("the batch left nothing in lastRead: this test would not test it")
		}

		exec("UPDATE sku SET sell_price = sell_price + 100 WHERE id = ?", id)
		o, err := place(1)
		if err != nil {
			t.Fatal(err)
		}
		if o.Amount != first.Amount+100 || o.Lines[0].UnitPrice != first.Amount+100 {
			t.Errorf("after a price change: amount %d, unit price %d; want %d", o.Amount, o.Lines[0].UnitPrice, first.Amount+100)
		}

		exec("UPDATE goods SET name = ? WHERE id = ?", "改名的T恤", goods)
		if o, err = place(1); err != nil {
			t.Fatal(err)
		}
		var name string
		if err := db.SQL.QueryRow("SELECT goods_name FROM order_line WHERE order_id = ?", o.ID).Scan(&name); err != nil || name != "改名的T恤" {
			t.Errorf("after a rename: the line says %q (%v), want the new name", name, err)
		}

		for _, off := range []struct {
			set, reset string
			arg        int64
		}{
			{"UPDATE goods SET status = 'OFF_SHELF' WHERE id = ?", "UPDATE goods SET status = 'ON_SHELF' WHERE id = ?", goods},
			{"UPDATE sku SET status = 'DISABLED' WHERE id = ?", "UPDATE sku SET status = 'ENABLED' WHERE id = ?", id},
		} {
			if _, err := place(1); err != nil { // lastRead: on sale
				t.Fatal(err)
			}
			exec(off.set, off.arg)
			before := f.counts(t)
			if _, err := place(1); !errors.Is(err, ErrSkuUnavailable) {
				t.Errorf("after %q: err = %v, want SKU_UNAVAILABLE", off.set, err)
			}
			if after := f.counts(t); !equalCounts(before, after) {
				t.Errorf("after %q: rows changed by a refused order: %v → %v", off.set, before, after)
			}
			exec(off.reset, off.arg)
		}

		// Sold out, then restocked: the next order is served, not refused
		// from the memory of zero.
		f.setStock(t, id, 1)
		if _, err := place(1); err != nil {
			t.Fatal(err)
		}
		f.setStock(t, id, 5)
		if _, err := place(2); err != nil {
			t.Errorf("after a restock: %v", err)
		}

		// Plenty remembered, little left: stock taken elsewhere refuses the
		// order and writes nothing.
		f.setStock(t, id, 1)
		before := f.counts(t)
		if _, err := place(2); !errors.Is(err, ErrOutOfStock) {
			t.Errorf("after stock was taken elsewhere: err = %v, want OUT_OF_STOCK", err)
		}
		if after := f.counts(t); !equalCounts(before, after) {
			t.Errorf("rows changed by a refused order: %v → %v", before, after)
		}
		if got, led := f.stock(t, id), f.ledgerSum(t, id, 0); got != 1 || led != 1 {
			t.Errorf("stock = %d, ledger balance = %d; want 1, 1", got, led)
		}
	})
}
