package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// createGoods takes the stock mode it is given and defaults to
// DEDUCT_AT_ORDER; a value outside the enum writes nothing.
func TestCreateStockMode(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		for i, tc := range []struct {
			in, want enums.StockMode
		}{
			{"", enums.DeductAtOrder},
			{enums.DeductAtOrder, enums.DeductAtOrder},
			{enums.LockAtOrder, enums.LockAtOrder},
		} {
			g, err := cat.Create(ctx, catalog.CreateInput{
				Name: "围巾 " + strconv.Itoa(i), Status: enums.GoodsOnShelf, StockMode: tc.in,
				Specs:      []catalog.SpecInput{{Name: "颜色", Values: []string{"红", "绿"}}},
				DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("899.00"), Stock: 5},
			})
			if err != nil || g == nil {
				t.Fatalf("Create(stockMode %q) = %v, %v", tc.in, g, err)
			}
			if g.StockMode != tc.want {
				t.Errorf("Create(stockMode %q) answers stockMode %q, want %q", tc.in, g.StockMode, tc.want)
			}
			if row := goodsRow(t, db, g.ID); row.StockMode != tc.want {
				t.Errorf("Create(stockMode %q) stored stock_mode %q, want %q", tc.in, row.StockMode, tc.want)
			}
			if v, err := cat.Goods(ctx, catalog.Viewer{}, g.ID); err != nil || v == nil || v.StockMode != tc.want {
				t.Errorf("customer view after Create(stockMode %q) = %+v, %v; want stockMode %q", tc.in, v, err, tc.want)
			}
		}

		before := countRows(t, db)
		_, err := cat.Create(ctx, catalog.CreateInput{
			Name: "坏模式", Status: enums.GoodsOnShelf, StockMode: "LOCK_AT_PAYMENT",
			DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("1.00"), Stock: 1},
		})
		if !errors.Is(err, errs.InvalidInput) {
			t.Errorf("Create(stockMode LOCK_AT_PAYMENT) error = %v, want InvalidInput", err)
		}
		if after := countRows(t, db); after != before {
			t.Errorf("a refused stock mode wrote rows: %+v -> %+v", before, after)
		}
	})
}

// The demo catalog's one lock-mode goods is the scarf; the three goods
// before it stay deduct-at-order.
func TestDemoStockModes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		cat, ids := seeded(t, db)
		for code, want := range map[string]enums.StockMode{
			demo.TShirtCode: enums.DeductAtOrder, demo.BagCode: enums.DeductAtOrder,
			demo.ShoeCode: enums.DeductAtOrder, demo.ScarfCode: enums.LockAtOrder,
		} {
			g, err := cat.Goods(context.Background(), catalog.Viewer{}, ids[code])
			if err != nil || g == nil {
				t.Fatalf("%s: %v, %v", code, g, err)
			}
			if g.StockMode != want {
				t.Errorf("%s stockMode = %q, want %q", code, g.StockMode, want)
			}
			if code != demo.ScarfCode {
				continue
			}
			skus := g.SkuList(false)
			if len(skus) != len(demo.ScarfColours) || g.Status != enums.GoodsOnShelf {
				t.Fatalf("scarf: %d SKUs, status %s; want %d on shelf", len(skus), g.Status, len(demo.ScarfColours))
			}
			for _, s := range skus {
				if s.Stock != demo.ScarfStock || s.LockedStock != 0 || s.AvailableStock() != demo.ScarfStock {
					t.Errorf("scarf SKU %s: stock %d, locked %d, available %d; want %d, 0, %d",
						s.SpecValueStr, s.Stock, s.LockedStock, s.AvailableStock(), demo.ScarfStock, demo.ScarfStock)
				}
			}
		}
	})
}

// Through the GraphQL API: createGoods with and without stockMode, an
// unknown value refused before anything is written, and setGoodsStockMode
// there and back, each edit moving the goods' version and showing in a
// customer's next read although the customer's view is cached for an hour.
func TestStockModeOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Hour // only the edit's invalidation can make the customer see it
		signer, err := auth.NewSigner("catalog-test-secret-0123456789")
		must.NoErr(t, err)
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		cat, h := sf.Catalog, sf.Handler()
		admin, err := signer.Issue("alice", auth.Admin, time.Hour)
		must.NoErr(t, err)
		customer, err := signer.Issue("bob", auth.Customer, time.Hour)
		must.NoErr(t, err)
		do := func(token, query string, vars map[string]any) gqlAnswer {
			t.Helper()
			return gqlAnswer{gqltest.Do(t, h, token, query, vars)}
		}

		const fields = `id stockMode version skus { stock lockedStock availableStock }`
		create := `mutation($in: CreateGoodsInput!) { createGoods(input: $in) { ` + fields + ` } }`
		input := func(code string) map[string]any {
			return map[string]any{"name": "围巾 " + code, "code": code, "status": "ON_SHELF",
				"specs":      []map[string]any{{"name": "颜色", "values": []string{"红", "绿"}}},
				"defaultSku": map[string]any{"sellPrice": "899.00", "stock": 20}}
		}
		lock := input("GQL-LOCK")
		lock["stockMode"] = "LOCK_AT_ORDER"
		null := input("GQL-NULL")
		null["stockMode"] = nil
		for _, tc := range []struct {
			name string
			in   map[string]any
			want enums.StockMode
		}{
			{"stockMode left out", input("GQL-DEFAULT"), enums.DeductAtOrder},
			{"stockMode: null", null, enums.DeductAtOrder},
			{"stockMode: LOCK_AT_ORDER", lock, enums.LockAtOrder},
		} {
			g := do(admin, create, map[string]any{"in": tc.in}).goods(t, "createGoods", tc.name)
			if g.StockMode != tc.want {
				t.Errorf("createGoods with %s: stockMode %q, want %q", tc.name, g.StockMode, tc.want)
			}
			if id, _ := strconv.ParseInt(g.ID, 10, 64); goodsRow(t, db, id).StockMode != tc.want {
				t.Errorf("createGoods with %s stored stock_mode %q, want %q", tc.name, goodsRow(t, db, id).StockMode, tc.want)
			}
			for _, s := range g.Skus {
				if s.Stock != 20 || s.LockedStock != 0 || s.AvailableStock != 20 {
					t.Errorf("createGoods with %s: SKU %+v, want stock 20, locked 0, available 20", tc.name, s)
				}
			}
		}

		// gqlgen refuses an unknown enum value, in a variable or a literal,
		// before the resolver runs.
		before := countRows(t, db)
		bad := input("GQL-BAD")
		bad["stockMode"] = "LOCK_AT_PAYMENT"
		wantCode(t, "createGoods with stockMode LOCK_AT_PAYMENT in a variable", do(admin, create, map[string]any{"in": bad}), "GRAPHQL_VALIDATION_FAILED")
		literal := `mutation { createGoods(input: {name: "x", status: ON_SHELF, stockMode: LOCK_AT_PAYMENT, defaultSku: {sellPrice: "1.00"}}) { id } }`
		wantCode(t, "createGoods with a literal stockMode LOCK_AT_PAYMENT", do(admin, literal, nil), "GRAPHQL_VALIDATION_FAILED")
		if after := countRows(t, db); after != before {
			t.Errorf("refused stock modes wrote rows: %+v -> %+v", before, after)
		}

		// setGoodsStockMode, there and back.
		g := do(admin, create, map[string]any{"in": input("GQL-SWITCH")}).goods(t, "createGoods", "the goods to switch")
		read := `query($id: ID!) { goods(id: $id) { ` + fields + ` } }`
		set := `mutation($id: ID!, $mode: StockMode!) { setGoodsStockMode(goodsId: $id, mode: $mode) { ` + fields + ` } }`
		vars := map[string]any{"id": g.ID}
		if c := do(customer, read, vars).goods(t, "goods", "customer before the switch"); c.StockMode != enums.DeductAtOrder || c.Version != g.Version {
			t.Fatalf("customer before the switch: %+v, want DEDUCT_AT_ORDER at version %d", c, g.Version)
		}
		version := g.Version
		for _, mode := range []enums.StockMode{enums.LockAtOrder, enums.DeductAtOrder} {
			vars := map[string]any{"id": g.ID, "mode": mode}
			wantCode(t, "setGoodsStockMode as a customer", do(customer, set, vars), "FORBIDDEN")
			wantCode(t, "setGoodsStockMode without a token", do("", set, vars), "UNAUTHENTICATED")
			s := do(admin, set, vars).goods(t, "setGoodsStockMode", string(mode))
			if s.StockMode != mode || s.Version != version+1 {
				t.Errorf("setGoodsStockMode(%s) = %s at version %d, want %s at version %d", mode, s.StockMode, s.Version, mode, version+1)
			}
			version = s.Version
			if row := goodsRow(t, db, mustID(t, g.ID)); row.StockMode != mode || row.Version != version {
				t.Errorf("after setGoodsStockMode(%s) the row has %s at version %d", mode, row.StockMode, row.Version)
			}
			c := do(customer, read, map[string]any{"id": g.ID}).goods(t, "goods", "customer after the switch")
			if c.StockMode != mode || c.Version != version {
				t.Errorf("customer after setGoodsStockMode(%s): %s at version %d, want %s at version %d", mode, c.StockMode, c.Version, mode, version)
			}
			for _, k := range c.Skus {
				if k.Stock != 20 || k.AvailableStock != 20 {
					t.Errorf("setGoodsStockMode(%s) moved stock: %+v", mode, k)
				}
			}
		}
		wantCode(t, "setGoodsStockMode of an unknown goods",
			do(admin, set, map[string]any{"id": "424242", "mode": "LOCK_AT_ORDER"}), "NOT_FOUND")
		wantCode(t, "setGoodsStockMode(LOCK_AT_PAYMENT)",
			do(admin, set, map[string]any{"id": g.ID, "mode": "LOCK_AT_PAYMENT"}), "GRAPHQL_VALIDATION_FAILED")
		if row := goodsRow(t, db, mustID(t, g.ID)); row.Version != version || row.StockMode != enums.DeductAtOrder {
			t.Errorf("refused switches changed the goods: %s at version %d, want DEDUCT_AT_ORDER at %d", row.StockMode, row.Version, version)
		}
		// The domain call refuses a value Go code can make but GraphQL cannot.
		if _, err := cat.SetStockMode(context.Background(), mustID(t, g.ID), "LOCK_AT_PAYMENT"); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("SetStockMode(LOCK_AT_PAYMENT) error = %v, want InvalidInput", err)
		}
	})
}

// gqlAnswer is an answer with the goods reader below.
type gqlAnswer struct{ gqltest.Answer }

type gqlGoods struct {
	ID        string
	StockMode enums.StockMode
	Version   int64
	Skus      []struct{ Stock, LockedStock, AvailableStock int64 }
}

// goods reads the one field of a with a goods in it, failing on any error.
func (a gqlAnswer) goods(t *testing.T, field, what string) gqlGoods {
	t.Helper()
	var out *gqlGoods
	if len(a.Errors) > 0 || json.Unmarshal(a.Data[field], &out) != nil || out == nil {
		t.Fatalf("%s (%s): data %s, errors %+v", field, what, a.Data, a.Errors)
	}
	return *out
}

func wantCode(t *testing.T, what string, a gqlAnswer, code string) {
	t.Helper()
	if a.Code() != code {
		t.Errorf("%s: code %q, want %s (data %s, errors %+v)", what, a.Code(), code, a.Data, a.Errors)
	}
}

func mustID(t *testing.T, id string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", id, err)
	}
	return n
}
