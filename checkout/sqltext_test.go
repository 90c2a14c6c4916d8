package checkout

import (
	"context"
	"testing"
	"time"

	"storefront/internal/testdb"
)

// Every string goes into the statement as it was given, whatever it holds
// and whatever the session's sql_mode: the batch writes buyers' keys and
// remarks inline.
func TestSQLTextValuesRoundTrip(t *testing.T) {
	db := testdb.Open(t, testdb.MySQL)
	ctx := context.Background()
	conn, err := db.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "CREATE TEMPORARY TABLE sqltext_probe (s VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, n BIGINT, t DATETIME(6))"); err != nil {
		t.Fatal(err)
	}
	values := []string{
		"", "plain-key_123", "it's", `back\slash`, `\'; DROP TABLE orders; -- `, `"double"`, "?",
		"纯棉圆领T恤", "黑色,L", "emoji 🙂", "tab\tnew\nline\r", "nul\x00byte", "%_", "\x7f", `\`,
	}
	at := time.Date(2026, 11, 30, 5, 6, 7, 123456000, time.UTC)
	for _, mode := range []string{"DEFAULT", "CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')", "CONCAT(@@sql_mode, ',ANSI_QUOTES')"} {
		if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = "+mode); err != nil {
			t.Fatal(err)
		}
		for i, v := range values {
			var q sqlText
			q.sql("INSERT INTO sqltext_probe VALUES (")
			q.str(v)
			q.sql(", ")
			q.int(int64(-i) * 1e15)
			q.sql(", ")
			q.time(at.In(time.FixedZone("UTC+8", 8*3600)))
			q.sql(")")
			if _, err := conn.ExecContext(ctx, "DELETE FROM sqltext_probe"); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, q.String()); err != nil {
				t.Fatalf("sql_mode %s, %q: %v\n%s", mode, v, err, q.String())
			}
			var got string
			var n int64
			var ts time.Time
			if err := conn.QueryRowContext(ctx, "SELECT s, n, t FROM sqltext_probe").Scan(&got, &n, &ts); err != nil {
				t.Fatal(err)
			}
			if got != v || n != int64(-i)*1e15 || !ts.Equal(at) {
				t.Errorf("sql_mode %s: wrote %q, %d, %v; read %q, %d, %v", mode, v, int64(-i)*1e15, at, got, n, ts)
			}
		}
	}
	if _, err := conn.ExecContext(ctx, "SET SESSION sql_mode = DEFAULT"); err != nil {
		t.Fatal(err)
	}
}

// A batch writes the same few times many times over; each is formatted once
// and never mixed up with another.
func TestSQLTextTimes(t *testing.T) {
	var q sqlText
	a := time.Date(2026, 11, 30, 5, 6, 7, 0, time.UTC)
	b := a.Add(24*time.Hour + 500*time.Microsecond)
	for i, at := range []time.Time{a, b, a, b.In(time.FixedZone("UTC+8", 8*3600)), a.Add(time.Second)} {
		if i > 0 {
			q.sql(",")
		}
		q.time(at)
	}
	want := "'2026-11-30 05:06:07','2026-12-01 05:06:07.0005','2026-11-30 05:06:07','2026-12-01 05:06:07.0005','2026-11-30 05:06:08'"
	if got := q.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
