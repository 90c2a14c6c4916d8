package inventory_test

import (
	"context"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// BenchmarkAdjust measures one admin adjustment end to end (idempotency
// probe, CAS UPDATE, read-back, ledger insert, commit), from parallel
// goroutines on one SKU: the hot-row case.
func BenchmarkAdjust(b *testing.B) {
	for _, backend := range testdb.Backends {
		b.Run(string(backend), func(b *testing.B) {
			db := testdb.Open(b, backend)
			ctx := context.Background()
			g, err := catalog.New(db, catalog.DefaultConfig()).Create(ctx, catalog.CreateInput{
				Name: "bench", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 100, Stock: 1_000_000}})
			if err != nil {
				b.Fatal(err)
			}
			inv, id := inventory.New(db), g.SkuList(false)[0].ID
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: id, Delta: -1, Reason: "bench"}); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
