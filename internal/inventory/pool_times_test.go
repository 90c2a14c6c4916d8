package inventory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/testsupport/testdb"
)

// A MySQL database made before issue 25 has TIMESTAMP pool times (ending in
// 2038). Migrate turns them into DATETIME in place: existing pools keep
// their times, and a pool past 2038 can then be made.
func TestPoolTimesMigrateFromTimestamp(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, testdb.MySQL)
	if _, err := db.SQL.Exec("ALTER TABLE stock_pool MODIFY starts_at TIMESTAMP NOT NULL, MODIFY ends_at TIMESTAMP NOT NULL"); err != nil {
		t.Fatal(err)
	}
	s := oneSku(t, db, 10)
	inv := inventory.New(db)
	starts, ends := time.Now().UTC().Truncate(time.Second).Add(-time.Minute), time.Date(2037, 6, 1, 12, 0, 0, 0, time.UTC)
	old, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: s.ID, Name: "old", Price: 100, Quantity: 1, PerBuyerLimit: 1, StartsAt: starts, EndsAt: ends})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: s.ID, Name: "past 2038", Price: 100, Quantity: 1, PerBuyerLimit: 1,
		StartsAt: starts, EndsAt: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)}); err == nil {
		t.Fatal("a TIMESTAMP column took a time past 2038: the test does not emulate the old schema")
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, col := range []string{"starts_at", "ends_at"} {
		var typ string
		if err := db.SQL.QueryRow("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'stock_pool' AND COLUMN_NAME = ?", col).Scan(&typ); err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(typ, "datetime") {
			t.Errorf("stock_pool.%s is %s after the migration, want datetime", col, typ)
		}
	}
	got, err := inv.Pool(ctx, old.ID)
	if err != nil || !got.StartsAt.Equal(starts) || !got.EndsAt.Equal(ends) {
		t.Errorf("the old pool after the migration: %+v (%v), want %v..%v", got, err, starts, ends)
	}
	far := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)
	p, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: s.ID, Name: "far", Price: 100, Quantity: 1, PerBuyerLimit: 1, StartsAt: starts, EndsAt: far})
	if err != nil {
		t.Fatalf("a pool ending in 9999 after the migration: %v", err)
	}
	if got, err := inv.Pool(ctx, p.ID); err != nil || !got.EndsAt.Equal(far) {
		t.Errorf("the pool ending in 9999 reads %+v (%v)", got, err)
	}
}
