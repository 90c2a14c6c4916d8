package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A MySQL or MariaDB database made before every time column was DATETIME(6)
// (the schema of 3011f1b: ent's TIMESTAMP everywhere, stock_pool's times
// DATETIME) keeps every time it holds through Migrate, and every time
// column of every table is DATETIME(6) after it: a coupon window past
// 2038, before 1970 or in 9999 is then stored and read back to the
// microsecond. A second Migrate changes nothing.
func TestMigrateTimesToDatetime6(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t, testdb.MySQL)
	type column struct{ table, name, typ, nullable string }
	columns := func() []column {
		t.Helper()
		rs, err := db.SQL.QueryContext(ctx, "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS "+
			"WHERE TABLE_SCHEMA = DATABASE() AND DATA_TYPE IN ('timestamp', 'datetime', 'date', 'time') ORDER BY TABLE_NAME, COLUMN_NAME")
		if err != nil {
			t.Fatal(err)
		}
		defer rs.Close()
		var out []column
		for rs.Next() {
			var c column
			if err := rs.Scan(&c.table, &c.name, &c.typ, &c.nullable); err != nil {
				t.Fatal(err)
			}
			out = append(out, c)
		}
		if err := rs.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	all := func(when string) []column {
		t.Helper()
		cs := columns()
		if len(cs) < 30 {
			t.Fatalf("%s: %d time columns, want every table's (30 or more)", when, len(cs))
		}
		for _, c := range cs {
			if c.typ != "datetime(6)" {
				t.Errorf("%s: %s.%s is %s, want datetime(6) (ent/schema: every field.Time takes SchemaType(datetime))", when, c.table, c.name, c.typ)
			}
		}
		return cs
	}
	cs := all("a new database")

	// The old schema: TIMESTAMP (seconds, 1970..2038) as ent declared it,
	// with the same nullability; stock_pool's window DATETIME.
	for _, c := range cs {
		typ := "TIMESTAMP"
		if c.table == "stock_pool" && (c.name == "starts_at" || c.name == "ends_at") {
			typ = "DATETIME"
		}
		null := "NOT NULL"
		if c.nullable == "YES" {
			null = "NULL"
		}
		if _, err := db.SQL.ExecContext(ctx, fmt.Sprintf("ALTER TABLE `%s` MODIFY `%s` %s %s", c.table, c.name, typ, null)); err != nil {
			t.Fatalf("making %s.%s %s: %v", c.table, c.name, typ, err)
		}
	}
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	window := [2]time.Time{time.Date(1970, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(2038, 1, 19, 3, 14, 7, 0, time.UTC)}
	old, err := db.Client.Coupon.Create().SetName("old").SetKind(enums.CouponAmountOff).SetAmountOff(100).SetValidDays(30).
		SetClaimStartsAt(window[0]).SetClaimEndsAt(window[1]).SetCreatedAt(created).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Client.Coupon.Create().SetName("past 2038").SetKind(enums.CouponAmountOff).SetAmountOff(100).SetValidDays(30).
		SetClaimEndsAt(window[1].Add(time.Second)).Save(ctx); err == nil {
		t.Fatal("a TIMESTAMP column took 2038-01-19T03:14:08Z: the test does not emulate the old schema")
	}
	for _, c := range columns() {
		if !strings.HasPrefix(c.typ, "timestamp") && !(c.table == "stock_pool" && c.typ == "datetime") {
			t.Fatalf("the old schema has %s.%s as %s", c.table, c.name, c.typ)
		}
	}

	for i := range 2 {
		if err := db.Migrate(ctx); err != nil {
			t.Fatalf("migrate %d: %v", i+1, err)
		}
		after := all(fmt.Sprintf("after migrate %d", i+1))
		for j, c := range after {
			if c.nullable != cs[j].nullable || c.table != cs[j].table || c.name != cs[j].name {
				t.Errorf("after migrate %d: %+v, want the nullability of %+v", i+1, c, cs[j])
			}
		}
		got, err := db.Client.Coupon.Get(ctx, old.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.ClaimStartsAt.Equal(window[0]) || !got.ClaimEndsAt.Equal(window[1]) || !got.CreatedAt.Equal(created) {
			t.Errorf("after migrate %d the old coupon holds %v..%v created %v, want %v..%v created %v",
				i+1, got.ClaimStartsAt, got.ClaimEndsAt, got.CreatedAt, window[0], window[1], created)
		}
	}

	for _, w := range [][2]time.Time{
		{time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), time.Date(2038, 1, 19, 3, 14, 8, 0, time.UTC)},
		{time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999_999_000, time.UTC)},
		{time.Date(2026, 12, 7, 16, 0, 0, 123_456_000, time.UTC), time.Date(2100, 1, 1, 0, 0, 0, 1_000, time.UTC)},
	} {
		c, err := db.Client.Coupon.Create().SetName("far").SetKind(enums.CouponAmountOff).SetAmountOff(100).SetValidDays(30).
			SetClaimStartsAt(w[0]).SetClaimEndsAt(w[1]).Save(ctx)
		if err != nil {
			t.Fatalf("a coupon claimable %v..%v after the migration: %v", w[0], w[1], err)
		}
		got, err := db.Client.Coupon.Get(ctx, c.ID)
		if err != nil || !got.ClaimStartsAt.Equal(w[0]) || !got.ClaimEndsAt.Equal(w[1]) || got.ClaimEndsAt.Location() != time.UTC {
			t.Errorf("a coupon claimable %v..%v reads back %v..%v (%v)", w[0], w[1], got.ClaimStartsAt, got.ClaimEndsAt, err)
		}
	}
}
