package store_test

import (
	"context"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A database made before sku.stock_version existed (the schema of 8aa0af2:
// one version moved by sales and edits alike) keeps every SKU's stock,
// lock, ledger and version through Migrate, and the new stock version
// starts at the old version, so a form read by the older binary is still
// current for either mutation. A second Migrate changes nothing, and one
// after a partial run finishes the copy.
func TestMigrateSplitsTheSkuVersion(t *testing.T) {
	ctx := context.Background()
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			spec := testdb.Spec(t, b)
			db, err := store.Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			// The old schema: the same tables without the column.
			exec("ALTER TABLE sku DROP COLUMN stock_version")
			exec("INSERT INTO goods (id, name, code, status, spec_type, stock_mode, version, description, images, slug, created_at, updated_at) " +
				"VALUES (1, 'T', 'T-1', 'ON_SHELF', 'MULTI', 'DEDUCT_AT_ORDER', 3, '', '[]', 't-1', '2026-01-01 00:00:00', '2026-01-01 00:00:00')")
			for i, r := range []struct{ stock, locked, version int64 }{{90, 0, 41}, {7, 2, 1}, {0, 0, 12}} {
				id := int64(i + 1)
				exec("INSERT INTO sku (id, goods_id, spec_value_ids, spec_value_str, spec_key, sell_price, lineation_price, cost_price, stock, lock_stock, version, volume, status, created_at, updated_at) "+
					"VALUES (?, 1, '', '', ?, 8900, 0, 0, ?, ?, ?, 5, 'ENABLED', '2026-01-01 00:00:00', '2026-01-01 00:00:00')",
					id, string(rune('a'+i)), r.stock, r.locked, r.version)
				exec("INSERT INTO stock_log (item_id, goods_id, change_type, change_num, before_stock, after_stock, biz_type, biz_sn, remark, created_at, pool_id) "+
					"VALUES (?, 1, 5, ?, 0, ?, 'manual', ?, 'opening', '2026-01-01 00:00:00', 0)", id, r.stock, r.stock, "open-"+string(rune('a'+i)))
			}
			type row struct{ stock, locked, version, stockVersion, volume, ledger int64 }
			read := func() map[int64]row {
				t.Helper()
				rs, err := db.SQL.QueryContext(ctx, "SELECT s.id, s.stock, s.lock_stock, s.version, s.stock_version, s.volume, "+
					"(SELECT SUM(change_num) FROM stock_log l WHERE l.item_id = s.id) FROM sku s ORDER BY s.id")
				if err != nil {
					t.Fatal(err)
				}
				defer rs.Close()
				out := map[int64]row{}
				for rs.Next() {
					var id int64
					var r row
					if err := rs.Scan(&id, &r.stock, &r.locked, &r.version, &r.stockVersion, &r.volume, &r.ledger); err != nil {
						t.Fatal(err)
					}
					out[id] = r
				}
				return out
			}

			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("migrating the old schema: %v", err)
			}
			want := map[int64]row{1: {90, 0, 41, 41, 5, 90}, 2: {7, 2, 1, 1, 5, 7}, 3: {0, 0, 12, 12, 5, 0}}
			got := read()
			for id, w := range want {
				if got[id] != w {
					t.Errorf("SKU %d after migrate = %+v, want %+v", id, got[id], w)
				}
			}

			// Once split, the versions move apart and a later migrate keeps them.
			exec("UPDATE sku SET stock_version = stock_version + 1 WHERE id = 1")
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if r := read()[1]; r.version != 41 || r.stockVersion != 42 {
				t.Errorf("SKU 1 after a second migrate: version %d, stock version %d, want 41 and 42", r.version, r.stockVersion)
			}

			// A migrate that died after ent's ALTER TABLE (it commits on its own
			// on MySQL) left rows at the column's DEFAULT 0: the next migrate
			// still copies them, and leaves the copied ones alone.
			exec("UPDATE sku SET stock_version = 0 WHERE id = 3")
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			got = read()
			if got[3].stockVersion != 12 || got[1].stockVersion != 42 || got[2].stockVersion != 1 {
				t.Errorf("after a migrate that resumed a partial one: stock versions %d, %d, %d, want 42, 1, 12",
					got[1].stockVersion, got[2].stockVersion, got[3].stockVersion)
			}
		})
	}
}
