package store_test

import (
	"context"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// IsDuplicate is "already done" to every business key that leans on it: a
// second write of the same key (PostgreSQL 23505, MySQL 1062, SQLite
// 2067) is one, and a row that names a parent that does not exist (23503,
// 1452, 787), a NOT NULL or a CHECK refused, are not — each is a fault to
// report, never a write to take as done.
func TestIsDuplicateOnRealViolations(t *testing.T) {
	ctx := context.Background()
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		for _, q := range []string{
			"CREATE TABLE dup_parent (id INTEGER PRIMARY KEY)",
			"CREATE TABLE dup_child (id INTEGER PRIMARY KEY, parent_id INTEGER NOT NULL, k VARCHAR(20), " +
				"CONSTRAINT dup_child_k_key UNIQUE (k), CONSTRAINT dup_child_parent_fk FOREIGN KEY (parent_id) REFERENCES dup_parent (id))",
			"INSERT INTO dup_parent (id) VALUES (1)",
			"INSERT INTO dup_child (id, parent_id, k) VALUES (1, 1, 'a')",
		} {
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		for _, tc := range []struct {
			name, q string
			dup     bool
			ofK     bool // a duplicate of dup_child_k_key
		}{
			{"the same unique key again", "INSERT INTO dup_child (id, parent_id, k) VALUES (2, 1, 'a')", true, true},
			{"the same primary key again", "INSERT INTO dup_child (id, parent_id, k) VALUES (1, 1, 'b')", true, false},
			{"a parent that does not exist", "INSERT INTO dup_child (id, parent_id, k) VALUES (3, 99, 'c')", false, false},
			{"a NOT NULL column left out", "INSERT INTO dup_child (id, k) VALUES (4, 'd')", false, false},
		} {
			_, err := db.SQL.ExecContext(ctx, tc.q)
			if err == nil {
				t.Fatalf("%s: no error", tc.name)
			}
			if got := store.IsDuplicate(err); got != tc.dup {
				t.Errorf("%s: IsDuplicate = %v, want %v (%v)", tc.name, got, tc.dup, err)
			}
			want := tc.ofK
			if db.Kind == store.SQLite {
				want = tc.dup // its errors name columns, not the index: any duplicate
			}
			if got := store.IsDuplicateOf(err, "dup_child_k_key"); got != want {
				t.Errorf("%s: IsDuplicateOf(dup_child_k_key) = %v, want %v (%v)", tc.name, got, want, err)
			}
		}
	})
}
