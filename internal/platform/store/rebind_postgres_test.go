package store

import (
	"database/sql/driver"
	"testing"
	"time"
)

func TestRebind(t *testing.T) {
	args := func(vs ...any) []driver.NamedValue {
		out := make([]driver.NamedValue, len(vs))
		for i, v := range vs {
			out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
		}
		return out
	}
	for _, tc := range []struct {
		q    string
		args []driver.NamedValue
		want string
	}{
		{"SELECT 1", nil, "SELECT 1"},
		{"UPDATE sku SET stock = stock - ? WHERE id = ?", args(int64(2), int64(7)), "UPDATE sku SET stock = stock - $1::int8 WHERE id = $2::int8"},
		{"SELECT `key` FROM idempotency_key WHERE user_id = ?", args("u"), `SELECT "key" FROM idempotency_key WHERE user_id = $1`},
		// Literals, quoted names and comments keep their marks and backticks.
		{"SELECT '?', 'it''s ?', \"a?\" FROM t WHERE x = ? -- why?\n AND y = ?", args("a", "b"),
			"SELECT '?', 'it''s ?', \"a?\" FROM t WHERE x = $1 -- why?\n AND y = $2"},
		// An ent statement with an ExprP mark among its own $n: the mark is
		// the argument after the last $n before it.
		{`SELECT * FROM "sku" WHERE "goods_id" = $1 AND stock - lock_stock >= ? AND "id" > $3`, args(int64(1), int64(5), int64(9)),
			`SELECT * FROM "sku" WHERE "goods_id" = $1 AND stock - lock_stock >= $2::int8 AND "id" > $3`},
		{"SELECT ? AS g UNION ALL SELECT ?", args(true, time.Unix(0, 0)), "SELECT $1::bool AS g UNION ALL SELECT $2::timestamptz"},
		{"INSERT INTO t (a) VALUES (?)", args(nil), "INSERT INTO t (a) VALUES ($1)"},
	} {
		if got := rebind(tc.q, tc.args); got != tc.want {
			t.Errorf("rebind(%q) =\n  %q\nwant\n  %q", tc.q, got, tc.want)
		}
	}
}
