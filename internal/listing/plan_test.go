package listing_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// TestListingPlans asserts the query plan of a customer's listing page for
// every sort field and direction, with and without a category, a search
// term and a cursor: one range of the index that leads with (scope, status)
// and ends in the sort column and goods_id, read in order (no sort step,
// no temporary table), on SQLite (EXPLAIN QUERY PLAN), MariaDB (EXPLAIN) and
// PostgreSQL (EXPLAIN). PostgreSQL's planner costs a 120-row table's
// sequential scan and sort below any index, so there the session turns
// both off (enable_seqscan, enable_sort): what is checked is that the index
// can give the page in order, which is what the table will need once it is
// large.
func TestListingPlans(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		_, cats := seed(t, db, 120, rand.New(rand.NewPCG(19, 120)))
		index := map[listing.Field]string{
			listing.ByID: "goodslisting_scope_status_goods_id", listing.ByName: "goodslisting_scope_status_name_key_goods_id",
			listing.ByPrice: "goodslisting_scope_status_min_price_goods_id", listing.ByCreated: "goodslisting_scope_status_created_at_goods_id",
			listing.BySales: "goodslisting_scope_status_sales_goods_id",
		}
		price := money.MustParse("10.00")
		checked := 0
		for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
			for _, scope := range []int64{listing.All, cats[0]} {
				for _, desc := range []bool{false, true} {
					for _, search := range []string{"", "纯棉"} {
						p := listing.Params{Scope: scope, Statuses: []enums.GoodsStatus{enums.GoodsOnShelf}, Search: search,
							Sort: sort, Desc: desc, First: 20}
						q, args, err := listing.Statement(db.Dialect.Name(), p)
						must.NoErr(t, err)
						name := fmt.Sprintf("by %s desc=%v scope=%d search=%q", sort, desc, scope, search)
						plan := explain(t, db, q, args)
						if !usesOnly(db, plan, index[sort]) {
							t.Errorf("%s: plan %q, want one in-order range of %s\n%s", name, plan, index[sort], q)
						}
						checked++
					}
				}
			}
		}
		if checked != 40 {
			t.Fatalf("checked %d plans", checked)
		}
		// A price range with another sort: the planner may range over the
		// price index and sort the matches, or read the sort's index in
		// order and filter; either way an index of goods_listing, never a
		// scan of the table.
		for _, sort := range []listing.Field{listing.ByName, listing.BySales, listing.ByPrice} {
			p := listing.Params{Scope: cats[0], Statuses: []enums.GoodsStatus{enums.GoodsOnShelf}, PriceMax: &price, Sort: sort, First: 20}
			q, args, err := listing.Statement(db.Dialect.Name(), p)
			must.NoErr(t, err)
			if plan := explain(t, db, q, args); !usesAnIndex(db, plan) {
				t.Errorf("price range by %s: plan %q scans the table\n%s", sort, plan, q)
			}
		}
	})
}

// explain returns the plan's lines: SQLite's details, or MariaDB's
// "table key type Extra" per row.
func explain(t *testing.T, db *store.DB, q string, args []any) []string {
	t.Helper()
	ctx := context.Background()
	prefix := "EXPLAIN "
	if db.Kind == store.SQLite {
		prefix = "EXPLAIN QUERY PLAN "
	}
	conn, err := db.SQL.Conn(ctx)
	must.NoErr(t, err)
	defer conn.Close()
	if db.Kind == store.Postgres {
		_, err := conn.ExecContext(ctx, "SET enable_seqscan = off; SET enable_sort = off")
		must.NoErr(t, err)
		defer conn.ExecContext(ctx, "RESET enable_seqscan; RESET enable_sort") //nolint:errcheck
	}
	rows, err := conn.QueryContext(ctx, prefix+q, args...)
	must.NoErr(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	must.NoErr(t, err)
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		must.NoErr(t, rows.Scan(ptrs...))
		line := map[string]string{}
		for i, c := range cols {
			line[strings.ToLower(c)] = vals[i].String
		}
		switch db.Kind {
		case store.SQLite:
			out = append(out, line["detail"])
		case store.Postgres:
			out = append(out, strings.TrimSpace(line["query plan"]))
		default:
			out = append(out, fmt.Sprintf("table=%s key=%s type=%s extra=%s", line["table"], line["key"], line["type"], line["extra"]))
		}
	}
	must.NoErr(t, rows.Err())
	return out
}

func usesAnIndex(db *store.DB, plan []string) bool {
	if len(plan) == 0 {
		return false
	}
	if db.Kind == store.Postgres {
		all := strings.Join(plan, "\n")
		return strings.Contains(all, " using goodslisting_") && !strings.Contains(all, "Seq Scan")
	}
	if db.Kind == store.SQLite {
		return strings.Contains(plan[0], "USING INDEX goodslisting_") || strings.Contains(plan[0], "USING COVERING INDEX goodslisting_")
	}
	return strings.Contains(plan[0], "key=goodslisting_") && !strings.Contains(plan[0], "type=ALL")
}

func usesOnly(db *store.DB, plan []string, index string) bool {
	if db.Kind == store.Postgres {
		// One scan of the index (Index or Index Only Scan, maybe
		// Backward), under the Limit, with no Sort and no other scan.
		scans, sorts := 0, 0
		for _, l := range plan {
			l = strings.TrimPrefix(l, "->  ")
			switch {
			case strings.Contains(l, "Scan") && strings.Contains(l, " using "+index+" on goods_listing"):
				scans++
			case strings.Contains(l, "Scan"), strings.HasPrefix(l, "Sort"), strings.Contains(l, "Incremental Sort"):
				sorts++
			}
		}
		return scans == 1 && sorts == 0
	}
	if len(plan) != 1 {
		return false
	}
	p := plan[0]
	if db.Kind == store.SQLite {
		return strings.Contains(p, "USING INDEX "+index+" ") || strings.HasSuffix(p, "USING INDEX "+index) ||
			strings.Contains(p, "USING COVERING INDEX "+index)
	}
	return strings.Contains(p, "key="+index+" ") && !strings.Contains(p, "filesort") && !strings.Contains(p, "temporary")
}
