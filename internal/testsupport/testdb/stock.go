package testdb

import (
	"context"
	"testing"

	"storefront/internal/platform/store"
)

// Stock is SKU item's stock as the database holds it now.
func Stock(t testing.TB, db *store.DB, item int64) int64 {
	t.Helper()
	s, err := db.Client.Sku.Get(context.Background(), item)
	if err != nil {
		t.Fatal(err)
	}
	return s.Stock
}
