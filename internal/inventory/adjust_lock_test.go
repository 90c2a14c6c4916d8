package inventory_test

import (
	"context"
	"errors"
	"testing"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// An adjustment that takes stock may take only what is available: units
// locked by unpaid lock-at-order orders are theirs until they pay or close.
func TestAdjustTakesOnlyAvailableStock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 10)
		if _, err := db.SQL.Exec("UPDATE sku SET lock_stock = 8 WHERE id = ?", s.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -3, Reason: "damaged"}); !errors.Is(err, inventory.ErrOutOfStock) {
			t.Errorf("taking 3 of 2 available (10 on hand, 8 locked): %v, want OUT_OF_STOCK", err)
		}
		got, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: s.ID, Delta: -2, Reason: "damaged"})
		if err != nil || got.Stock != 8 || got.LockStock != 8 {
			t.Errorf("taking the 2 available: %+v, %v; want stock 8, locked 8", got, err)
		}
		if _, sum := ledger(t, db, s.ID); sum != 8 {
			t.Errorf("ledger sum %d, want 8", sum)
		}
	})
}
