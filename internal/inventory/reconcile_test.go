package inventory_test

import (
	"context"
	"testing"

	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

func TestReconcileFindsOnlyRealDifferences(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := demo.Seed(ctx, catalog.New(db, catalog.DefaultConfig())); err != nil {
			t.Fatal(err)
		}
		inv := inventory.New(db)
		if d, err := inv.Reconcile(ctx, 100); err != nil || len(d) != 0 {
			t.Fatalf("fresh demo catalog: diffs %+v, err %v; want none", d, err)
		}
		// A write that bypasses the ledger is exactly what reconciliation exists to catch.
		victim := db.Client.Sku.Query().Where(sku.StockGT(5)).FirstX(ctx)
		db.Client.Sku.UpdateOneID(victim.ID).AddStock(-7).ExecX(ctx)
		d, err := inv.Reconcile(ctx, 100)
		if err != nil || len(d) != 1 || d[0].ItemID != victim.ID || d[0].Diff != -7 || d[0].LedgerSum != victim.Stock {
			t.Fatalf("diffs = %+v, %v; want SKU %d off by -7", d, err, victim.ID)
		}
		if n, err := inv.NegativeSKUs(ctx); err != nil || n != 0 {
			t.Errorf("negative SKUs = %d, %v", n, err)
		}
		db.Client.Sku.UpdateOneID(victim.ID).SetStock(-1).ExecX(ctx)
		if n, err := inv.NegativeSKUs(ctx); err != nil || n != 1 {
			t.Errorf("negative SKUs = %d, %v; want 1", n, err)
		}
	})
}
