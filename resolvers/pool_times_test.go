package resolvers_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// Pool times (issue 25, section 3): a malformed time or one outside
// inventory's range is INVALID_INPUT with nothing stored; every time
// accepted is stored and read back as given (to the second), on the admin's
// list and on the anonymous product page, past 2038 included (MariaDB's
// TIMESTAMP ended there).
func TestStockPoolTimes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Nanosecond
		signer, err := auth.NewSigner("pool-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		cat, h := sf.Catalog, sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		do := func(token, query string, vars map[string]any) gqltest.Answer {
			t.Helper()
			return gqltest.Do(t, h, token, query, vars)
		}
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "耳机", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 19900, Stock: 100}})
		if err != nil {
			t.Fatal(err)
		}
		item := strconv.FormatInt(g.SkuList(false)[0].ID, 10)
		pools := func() (n int) {
			t.Helper()
			if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_pool").Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		create := `mutation($in: CreateStockPoolInput!) { createStockPool(input: $in) { id startsAt endsAt } }`
		in := func(starts, ends string) map[string]any {
			return map[string]any{"in": map[string]any{"itemId": item, "name": "秒杀", "price": "9.90", "quantity": 1, "startsAt": starts, "endsAt": ends}}
		}
		past, future := "2020-01-01T00:00:00Z", "2100-01-01T00:00:00Z"
		for _, tc := range []struct{ name, starts, ends string }{
			{"startsAt at year 1", "0001-01-01T00:00:00Z", future},
			{"startsAt before 2000", "1999-12-31T23:59:59Z", future},
			{"startsAt garbage", "garbage", future},
			{"startsAt empty", "", future},
			{"startsAt without an offset", "2026-01-01 10:00:00", future},
			{"endsAt in year 10000", past, "10000-01-01T00:00:00Z"},
			{"endsAt garbage", past, "tomorrow"},
		} {
			if got := do(admin, create, in(tc.starts, tc.ends)); got.Code() != "INVALID_INPUT" {
				t.Errorf("createStockPool with %s: %+v, want INVALID_INPUT", tc.name, got)
			}
		}
		// The same written inline in the query, not as a variable.
		inline := `mutation { createStockPool(input: {itemId: "` + item + `", name: "秒杀", price: "9.90", quantity: 1, startsAt: "garbage", endsAt: "` + future + `"}) { id } }`
		if got := do(admin, inline, nil); got.Code() != "INVALID_INPUT" {
			t.Errorf("createStockPool with an inline startsAt garbage: %+v, want INVALID_INPUT", got)
		}
		if n := pools(); n != 0 {
			t.Fatalf("%d pools stored by refused requests, want 0", n)
		}

		type times struct{ ID, StartsAt, EndsAt string }
		for _, tc := range []struct{ name, starts, ends, wantStarts, wantEnds string }{
			{"the widest range", "2000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "2000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"},
			{"past 2038, with an offset and a fraction", "2020-01-01T08:00:00.5+08:00", "2038-01-19T03:14:08.999Z", "2020-01-01T00:00:00Z", "2038-01-19T03:14:08Z"},
		} {
			a := do(admin, create, in(tc.starts, tc.ends))
			var p times
			if a.Code() != "" || json.Unmarshal(a.Data["createStockPool"], &p) != nil {
				t.Fatalf("createStockPool with %s: %+v", tc.name, a)
			}
			if p.StartsAt != tc.wantStarts || p.EndsAt != tc.wantEnds {
				t.Errorf("createStockPool with %s answered %s..%s, want %s..%s", tc.name, p.StartsAt, p.EndsAt, tc.wantStarts, tc.wantEnds)
			}
			list := `query($id: ID!) { stockPools(itemId: $id) { edges { node { id startsAt endsAt } } } }`
			a = do(admin, list, map[string]any{"id": item})
			var conn struct{ Edges []struct{ Node times } }
			if a.Code() != "" || json.Unmarshal(a.Data["stockPools"], &conn) != nil || len(conn.Edges) == 0 || conn.Edges[0].Node != p {
				t.Errorf("stockPools after the pool with %s: %+v, want %+v first", tc.name, a, p)
			}
			page := `query($id: ID!) { goods(id: $id) { skus { activePool { id startsAt endsAt } } } }`
			a = do("", page, map[string]any{"id": strconv.FormatInt(g.ID, 10)})
			var goods struct{ Skus []struct{ ActivePool *times } }
			if a.Code() != "" || json.Unmarshal(a.Data["goods"], &goods) != nil || len(goods.Skus) != 1 || goods.Skus[0].ActivePool == nil {
				t.Fatalf("anonymous product page with the pool with %s: %+v", tc.name, a)
			}
			if got := *goods.Skus[0].ActivePool; got != p {
				t.Errorf("anonymous activePool = %+v, want %+v", got, p)
			}
			if _, err := inventory.New(db).ClosePool(ctx, mustID(t, p.ID)); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
