package resolvers_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

type poolJSON struct {
	ID, ItemID, Name, Price string
	Quantity, Stock, Sold   int64
	PerBuyerLimit           int64
	StartsAt, EndsAt        time.Time
	Status                  string
}

const poolFields = `id itemId name price quantity stock sold perBuyerLimit startsAt endsAt status`

// The contract of issue 18's admin side over GraphQL: createStockPool's
// checks and codes, the pool on Sku.activePool (public) and Sku.pools
// (admin only), the stockPools connection, closeStockPool returning the
// remainder to main stock.
func TestStockPoolsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Nanosecond // every read shows the stock as it is (a view's stock is otherwise up to 2 s old, by design)
		signer, err := auth.NewSigner("pool-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		cat, h := sf.Catalog, sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		customer, _ := signer.Issue("bob", auth.Customer, time.Hour)
		do := func(token, query string, vars map[string]any) gqltest.Answer {
			t.Helper()
			return gqltest.Do(t, h, token, query, vars)
		}
		g, err := cat.Create(ctx, catalog.CreateInput{Name: "耳机", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 19900, Stock: 10}})
		if err != nil {
			t.Fatal(err)
		}
		item := strconv.FormatInt(g.SkuList(false)[0].ID, 10)
		now := time.Now().UTC().Truncate(time.Second)
		input := func(edit func(map[string]any)) map[string]any {
			in := map[string]any{"itemId": item, "name": "双十二秒杀", "price": "99.00", "quantity": 4,
				"startsAt": now.Add(-time.Minute).Format(time.RFC3339), "endsAt": now.Add(time.Hour).Format(time.RFC3339)}
			if edit != nil {
				edit(in)
			}
			return map[string]any{"in": in}
		}
		create := `mutation($in: CreateStockPoolInput!) { createStockPool(input: $in) { ` + poolFields + ` } }`
		for _, tc := range []struct {
			name, token string
			edit        func(map[string]any)
			want        string
		}{
			{"a customer", customer, nil, "FORBIDDEN"},
			{"no token", "", nil, "UNAUTHENTICATED"},
			{"price 0.00", admin, func(in map[string]any) { in["price"] = "0.00" }, "INVALID_INPUT"},
			{"quantity 0", admin, func(in map[string]any) { in["quantity"] = 0 }, "INVALID_INPUT"},
			{"startsAt = endsAt", admin, func(in map[string]any) { in["startsAt"] = in["endsAt"] }, "INVALID_INPUT"},
			{"more than main stock", admin, func(in map[string]any) { in["quantity"] = 11 }, "OUT_OF_STOCK"},
			{"unknown SKU", admin, func(in map[string]any) { in["itemId"] = "99999" }, "NOT_FOUND"},
		} {
			if got := do(tc.token, create, input(tc.edit)).Code(); got != tc.want {
				t.Errorf("createStockPool by %s: code %q, want %q", tc.name, got, tc.want)
			}
		}
		a := do(admin, create, input(nil))
		var p poolJSON
		if a.Code() != "" || json.Unmarshal(a.Data["createStockPool"], &p) != nil {
			t.Fatalf("createStockPool: %+v", a)
		}
		if p.Price != "99.00" || p.Quantity != 4 || p.Stock != 4 || p.Sold != 0 || p.PerBuyerLimit != 1 || p.Status != "ACTIVE" ||
			p.ItemID != item || !p.EndsAt.Equal(now.Add(time.Hour)) {
			t.Errorf("createStockPool = %+v, want 99.00, 4 of 4, limit 1 (the default), ACTIVE, ending %v", p, now.Add(time.Hour))
		}
		later := do(admin, create, input(func(in map[string]any) {
			in["quantity"], in["perBuyerLimit"] = 2, 3
			in["startsAt"], in["endsAt"] = now.Add(time.Hour).Format(time.RFC3339), now.Add(2*time.Hour).Format(time.RFC3339)
		}))
		var scheduled poolJSON
		if later.Code() != "" || json.Unmarshal(later.Data["createStockPool"], &scheduled) != nil || scheduled.Status != "SCHEDULED" || scheduled.PerBuyerLimit != 3 {
			t.Fatalf("a later pool: %+v (%+v), want SCHEDULED, limit 3", later, scheduled)
		}

		type skuJSON struct {
			Stock      int64
			ActivePool *poolJSON
			Pools      []poolJSON
		}
		page := `query($id: ID!) { goods(id: $id) { skus { stock activePool { ` + poolFields + ` } pools { id status } } } }`
		readSku := func(token string) skuJSON {
			t.Helper()
			a := do(token, page, map[string]any{"id": strconv.FormatInt(g.ID, 10)})
			var out struct{ Skus []skuJSON }
			if a.Code() != "" || json.Unmarshal(a.Data["goods"], &out) != nil || len(out.Skus) != 1 {
				t.Fatalf("product page: %+v", a)
			}
			return out.Skus[0]
		}
		if s := readSku(""); s.Stock != 4 || s.ActivePool == nil || s.ActivePool.ID != p.ID || s.ActivePool.Stock != 4 || s.Pools != nil {
			t.Errorf("anonymous product page: %+v; want main stock 4, activePool %s with 4, pools null", s, p.ID)
		}
		if s := readSku(admin); len(s.Pools) != 2 || s.Pools[0].ID != scheduled.ID || s.Pools[1].ID != p.ID {
			t.Errorf("admin's Sku.pools = %+v, want [%s %s] (newest first)", s.Pools, scheduled.ID, p.ID)
		}

		list := `query($id: ID!, $after: String) { stockPools(itemId: $id, first: 1, after: $after) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`
		var conn struct {
			Edges []struct {
				Cursor string
				Node   struct{ ID string }
			}
			PageInfo struct {
				HasNextPage bool
				EndCursor   string
			}
		}
		a = do(admin, list, map[string]any{"id": item})
		if a.Code() != "" || json.Unmarshal(a.Data["stockPools"], &conn) != nil || len(conn.Edges) != 1 || conn.Edges[0].Node.ID != scheduled.ID || !conn.PageInfo.HasNextPage {
			t.Fatalf("stockPools first page: %+v", a)
		}
		a = do(admin, list, map[string]any{"id": item, "after": conn.PageInfo.EndCursor})
		if a.Code() != "" || json.Unmarshal(a.Data["stockPools"], &conn) != nil || len(conn.Edges) != 1 || conn.Edges[0].Node.ID != p.ID || conn.PageInfo.HasNextPage {
			t.Errorf("stockPools second page: %+v", a)
		}
		if got := do(customer, list, map[string]any{"id": item}).Code(); got != "FORBIDDEN" {
			t.Errorf("stockPools by a customer: %q, want FORBIDDEN", got)
		}

		// Ordering from the pools (issue 18, step 2): the pool's price, its
		// codes over GraphQL.
		order := `mutation($pool: ID!, $item: ID!, $n: Int!, $key: String) { placeOrder(input: {items: [{itemId: $item, poolId: $pool, quantity: $n}]}, idempotencyKey: $key) { amount lines { unitPrice quantity poolId } } }`
		for _, tc := range []struct {
			pool string
			n    int
			want string
		}{
			{p.ID, 2, "POOL_LIMIT_EXCEEDED"},
			{scheduled.ID, 1, "POOL_NOT_ACTIVE"},
			{"99999", 1, "NOT_FOUND"},
		} {
			if got := do(customer, order, map[string]any{"pool": tc.pool, "item": item, "n": tc.n, "key": "k-" + tc.pool}).Code(); got != tc.want {
				t.Errorf("placeOrder of %d from pool %s: code %q, want %q", tc.n, tc.pool, got, tc.want)
			}
		}
		a = do(customer, order, map[string]any{"pool": p.ID, "item": item, "n": 1, "key": "k-ok"})
		var placed struct {
			Amount string
			Lines  []struct {
				UnitPrice string
				Quantity  int64
				PoolID    string
			}
		}
		if a.Code() != "" || json.Unmarshal(a.Data["placeOrder"], &placed) != nil || placed.Amount != "99.00" || len(placed.Lines) != 1 || placed.Lines[0].PoolID != p.ID {
			t.Errorf("placeOrder of 1 from pool %s: %+v (%+v), want 99.00 from the pool", p.ID, a, placed)
		}

		closeQ := `mutation($id: ID!) { closeStockPool(poolId: $id) { ` + poolFields + ` } }`
		if got := do(customer, closeQ, map[string]any{"id": p.ID}).Code(); got != "FORBIDDEN" {
			t.Errorf("closeStockPool by a customer: %q, want FORBIDDEN", got)
		}
		a = do(admin, closeQ, map[string]any{"id": p.ID})
		var closed poolJSON
		if a.Code() != "" || json.Unmarshal(a.Data["closeStockPool"], &closed) != nil || closed.Status != "ENDED" || closed.Stock != 0 || closed.Sold != 1 {
			t.Errorf("closeStockPool = %+v (%+v), want ENDED, stock 0, 1 sold", a, closed)
		}
		if s := readSku(""); s.Stock != 7 || s.ActivePool != nil {
			t.Errorf("after the close: %+v; want main stock 7 (3 back, 2 in the later pool), no active pool", s)
		}
		if got := do(admin, closeQ, map[string]any{"id": "99999"}).Code(); got != "NOT_FOUND" {
			t.Errorf("closing an unknown pool: %q, want NOT_FOUND", got)
		}
	})
}
