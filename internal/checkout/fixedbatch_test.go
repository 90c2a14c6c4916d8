package checkout

import (
	"fmt"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// PlaceBatch is bench/count's way to a batch of a fixed size: exactly its
// orders, as one batch, each taking its unit.
func TestPlaceBatchIsOneBatchOfItsOrders(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		id := f.skuID(t, "黑色,L")
		f.setStock(t, id, 10)
		var ins []PlaceInput
		for i := range 4 {
			ins = append(ins, PlaceInput{UserID: "u", IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{one(id, 2)}})
		}
		orders, err := f.svc.PlaceBatch(t.Context(), ins)
		if err != nil {
			t.Fatal(err)
		}
		if b, n := f.svc.GroupStats(); b != 1 || n != 4 || len(orders) != 4 {
			t.Errorf("GroupStats = %d batches, %d orders, %d answered; want 1 batch of 4", b, n, len(orders))
		}
		if got := f.stock(t, id); got != 2 {
			t.Errorf("stock = %d, want 2", got)
		}
		if _, err := f.svc.PlaceBatch(t.Context(), []PlaceInput{{UserID: "u", Items: []ItemInput{one(id, 1)}}}); err == nil {
			t.Error("an order without a key: no error")
		}
	})
}
