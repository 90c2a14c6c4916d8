package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

type fixture struct {
	h   http.Handler
	cat *catalog.Service
	n   *atomic.Int64
}

func newFixture(t *testing.T, db *store.DB, n *atomic.Int64) *fixture {
	t.Helper()
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	// These tests count statements, including for lists far larger than
	// the complexity limit admits by default.
	cfg := app.DefaultConfig()
	cfg.HTTP.MaxComplexity = 1 << 30
	sf := app.New(db, nil, signer, cfg)
	t.Cleanup(sf.Close)
	return &fixture{h: sf.Handler(), cat: sf.Catalog, n: n}
}

// query runs one GraphQL request through the whole handler and returns the
// statements it sent.
func (f *fixture) query(t *testing.T, q string, vars map[string]any) int64 {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	f.n.Store(0)
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var resp struct {
		Errors []json.RawMessage
		Data   map[string]any
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || len(resp.Errors) > 0 || rec.Code != 200 {
		t.Fatalf("%d %s (%v)", rec.Code, rec.Body.Bytes(), err)
	}
	return f.n.Load()
}

const listQuery = `query($first: Int) { goodsList(first: $first) { edges { node {
  id name priceRange { min max } totalStock skus { id specValueStr sellPrice stock }
  selectable { specValueId selectable } } } pageInfo { hasNextPage } } }`

// goodsList with priceRange, totalStock and skus on every node costs the
// same number of statements for 5 goods as for 50: no N+1.
func TestGoodsListStatementsIndependentOfPageSize(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		setup := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(setup.Close)
		for i := range 50 {
			_, err := setup.Create(context.Background(), catalog.CreateInput{
				Name: fmt.Sprintf("goods %d", i), Code: fmt.Sprintf("G%02d", i), Status: enums.GoodsOnShelf,
				Specs:      []catalog.SpecInput{{Name: "颜色", Values: []string{"红", "绿"}}, {Name: "尺码", Values: []string{"S", "M", "L"}}},
				DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("10.00"), Stock: int64(i)},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		cold := map[int]int64{}
		for _, size := range []int{5, 50} {
			f := newFixture(t, db, n) // a fresh cache: every view is loaded
			cold[size] = f.query(t, listQuery, map[string]any{"first": size})
			if warm := f.query(t, listQuery, map[string]any{"first": size}); warm != 2 {
				t.Errorf("goodsList(first: %d) warm: %d statements, want 2 (the listing's index range, the page's goods rows)", size, warm)
			}
		}
		// The listing, the page's goods rows, then specs, spec values and SKUs of all of them.
		if cold[5] != 5 || cold[50] != 5 {
			t.Errorf("goodsList cold statements: first 5 → %d, first 50 → %d; want 5 and 5", cold[5], cold[50])
		}
	})
}

const pageQuery = `query($id: ID!, $sel: [ID!]) { goods(id: $id) {
  id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status }
  priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }`

// A cold product page of the 500-SKU goods costs four statements (goods,
// specs, spec values, SKUs), not one per SKU; a warm one costs none.
func TestProductPageStatements(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		setup := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(setup.Close)
		ids, err := demo.Seed(context.Background(), setup)
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, db, n)
		for _, code := range []string{demo.ShoeCode, demo.TShirtCode} {
			vars := map[string]any{"id": ids[code]}
			if got := f.query(t, pageQuery, vars); got != 4 {
				t.Errorf("%s cold product page: %d statements, want 4", code, got)
			}
			if got := f.query(t, pageQuery, vars); got != 0 {
				t.Errorf("%s warm product page: %d statements, want 0", code, got)
			}
		}

		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		for _, want := range []string{"storefront_catalog_cache_hits_total 2", "storefront_catalog_cache_misses_total 2", "storefront_catalog_cache_rejected_total 0"} {
			if !strings.Contains(rec.Body.String(), want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
	})
}

// Sku.activePool on every SKU of a page costs one statement for the whole
// goods (inventory.ActivePools), not one per SKU: a warm page of the
// 500-SKU shoe with it costs 1.
func TestActivePoolStatements(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		ctx := context.Background()
		setup := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(setup.Close)
		ids, err := demo.Seed(ctx, setup)
		if err != nil {
			t.Fatal(err)
		}
		inv := inventory.New(db)
		var item int64
		if err := db.SQL.QueryRow("SELECT id FROM sku WHERE goods_id = ? ORDER BY id DESC LIMIT 1", ids[demo.ShoeCode]).Scan(&item); err != nil {
			t.Fatal(err)
		}
		if _, err := inv.Adjust(ctx, inventory.AdjustInput{ItemID: item, Delta: 5, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		pool, err := inv.MoveToPool(ctx, inventory.PoolInput{ItemID: item, Name: "秒杀", Price: 990, Quantity: 3, PerBuyerLimit: 1,
			StartsAt: now.Add(-time.Minute), EndsAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		f := newFixture(t, db, n)
		q := `query($id: ID!) { goods(id: $id) { skus { id activePool { id price stock } } } }`
		vars := map[string]any{"id": ids[demo.ShoeCode]}
		f.query(t, q, vars) // warms the product view
		if got := f.query(t, q, vars); got != 1 {
			t.Errorf("warm page of %s with activePool on every SKU: %d statements, want 1", demo.ShoeCode, got)
		}
		body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		f.h.ServeHTTP(rec, req)
		var resp struct {
			Data struct {
				Goods struct {
					Skus []struct {
						ID         string
						ActivePool *struct{ ID, Price string }
					}
				}
			}
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		with := 0
		for _, s := range resp.Data.Goods.Skus {
			if s.ActivePool != nil {
				with++
				if s.ID != fmt.Sprint(item) || s.ActivePool.ID != fmt.Sprint(pool.ID) || s.ActivePool.Price != "9.90" {
					t.Errorf("SKU %s: activePool %+v, want pool %d at 9.90 on SKU %d only", s.ID, s.ActivePool, pool.ID, item)
				}
			}
		}
		if with != 1 || len(resp.Data.Goods.Skus) != 500 {
			t.Errorf("%d of %d SKUs show an active pool, want 1 of 500", with, len(resp.Data.Goods.Skus))
		}
	})
}
