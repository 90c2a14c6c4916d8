package store_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
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
			var q store.Text
			q.SQL("INSERT INTO sqltext_probe VALUES (")
			q.Str(v)
			q.SQL(", ")
			q.Int(int64(-i) * 1e15)
			q.SQL(", ")
			q.Time(at.In(time.FixedZone("UTC+8", 8*3600)))
			q.SQL(")")
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
	var q store.Text
	a := time.Date(2026, 11, 30, 5, 6, 7, 0, time.UTC)
	b := a.Add(24*time.Hour + 500*time.Microsecond)
	for i, at := range []time.Time{a, b, a, b.In(time.FixedZone("UTC+8", 8*3600)), a.Add(time.Second)} {
		if i > 0 {
			q.SQL(",")
		}
		q.Time(at)
	}
	want := "'2026-11-30 05:06:07','2026-12-01 05:06:07.0005','2026-11-30 05:06:07','2026-12-01 05:06:07.0005','2026-11-30 05:06:08'"
	if got := q.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// One row definition renders the same statement with bound arguments
// (Insert) and with its values inline (Text), and both write the same rows;
// a Lookup finds a row written earlier in the same transaction by its key.
func TestInsertAndTextRenderOneDefinition(t *testing.T) {
	type row struct {
		name string
		n    int64
		at   time.Time
	}
	def := func(r row, parent string) func(store.Values) {
		return func(v store.Values) {
			v.Str("name", r.name)
			v.Int("n", r.n)
			v.Raw("twice", "2 * "+strconv.FormatInt(r.n, 10))
			v.Time("at", r.at)
			v.Lookup("parent", "(SELECT id FROM probe_parent WHERE sn = ?)", parent)
			v.Str("key", "k-"+r.name) // the one reserved word, quoted
		}
	}
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	rows := []row{{"纯棉", 1, at}, {"it's", -2, at.Add(time.Second)}, {`a\b`, 3, at}}
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, q := range []string{
			"CREATE TABLE probe_parent (id INTEGER PRIMARY KEY, sn VARCHAR(16))",
			"CREATE TABLE probe (name VARCHAR(32), n BIGINT, twice BIGINT, at " + timeType(db) + ", parent BIGINT, `key` VARCHAR(32))",
			"INSERT INTO probe_parent (id, sn) VALUES (7, 'p-7')",
		} {
			if _, err := db.SQL.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		ins := store.NewInsert("probe")
		for _, r := range rows {
			ins.Row(def(r, "p-7"))
		}
		q, args := ins.SQL()
		if want := "INSERT INTO probe (name, n, twice, at, parent, `key`) VALUES (?, ?, 2 * 1, ?, (SELECT id FROM probe_parent WHERE sn = ?), ?), "; !strings.HasPrefix(q, want) || len(args) != 5*len(rows) {
			t.Fatalf("Insert rendered %s with %d args; want it to start %s, with %d args", q, len(args), want, 5*len(rows))
		}
		if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if text := textOf(db); text != nil { // the batches' inline form
			text.Insert("probe", len(rows), func(j int, v store.Values) { def(rows[j], "p-7")(v) })
			if _, err := db.SQL.ExecContext(ctx, text.String()); err != nil {
				t.Fatalf("%s: %v", text.String(), err)
			}
		}
		rs, err := db.SQL.QueryContext(ctx, "SELECT name, n, twice, parent, `key` FROM probe ORDER BY n, name")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var got []string
		for rs.Next() {
			var name, key string
			var n, twice, parent int64
			if err := rs.Scan(&name, &n, &twice, &parent, &key); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprint(name, "/", n, "/", twice, "/", parent, "/", key))
		}
		want := []string{`it's/-2/-4/7/k-it's`, "纯棉/1/2/7/k-纯棉", `a\b/3/6/7/k-a\b`}
		copies := 1
		if textOf(db) != nil {
			copies = 2
		}
		var all []string
		for _, w := range want {
			for range copies {
				all = append(all, w)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(all) {
			t.Errorf("rows read back: %v\nwant %v", got, all)
		}
	})
}

// timeType is a column type for a time without zone on db.
func timeType(db *store.DB) string {
	if db.Kind == store.Postgres {
		return "TIMESTAMP"
	}
	return "DATETIME"
}

// textOf is db's inline statement, nil where no batch writes one (SQLite).
func textOf(db *store.DB) *store.Text {
	switch db.Kind {
	case store.MySQL, store.MariaDB:
		return store.MySQLText(false)
	case store.Postgres:
		return store.PostgresText()
	}
	return nil
}
