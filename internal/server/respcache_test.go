package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// rcFixture is the handler as serve builds it with the response cache on,
// over the demo catalog, with statements counted.
type rcFixture struct {
	h                http.Handler
	cat              *catalog.Service
	rc               *ResponseCache
	n                *atomic.Int64
	admin, customer  string
	ids              map[string]int64
	shirt, bag, shoe int64
}

func eachCached(t *testing.T, cfg catalog.Config, fn func(t *testing.T, f *rcFixture)) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			n := new(atomic.Int64)
			db := testdb.Open(t, b, testdb.CountStatements(n))
			fn(t, newRCFixture(t, db, n, cfg))
		})
	}
}

func newRCFixture(t testing.TB, db *store.DB, n *atomic.Int64, cfg catalog.Config) *rcFixture {
	t.Helper()
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	r := Compose(t, db, cfg)
	cat := r.Catalog
	ids, err := demo.Seed(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	rc := NewResponseCache(cat, 0)
	t.Cleanup(rc.Close)
	f := &rcFixture{cat: cat, rc: rc, n: n, ids: ids, shirt: ids[demo.TShirtCode], bag: ids[demo.BagCode], shoe: ids[demo.ShoeCode]}
	if f.admin, err = signer.Issue("rc-admin", auth.Admin, time.Hour); err != nil {
		t.Fatal(err)
	}
	if f.customer, err = signer.Issue("rc-customer", auth.Customer, time.Hour); err != nil {
		t.Fatal(err)
	}
	f.h = New(Options{DB: db, Signer: signer, ResponseCache: rc,
		Resolver: r})
	return f
}

// answer is one HTTP answer with the statements it cost.
type answer struct {
	*httptest.ResponseRecorder
	statements int64
}

func (a answer) body() string { return a.Body.String() }

func (a answer) data(t *testing.T) map[string]any {
	t.Helper()
	var r struct {
		Data   map[string]any
		Errors []any
	}
	if err := json.Unmarshal(a.Body.Bytes(), &r); err != nil || len(r.Errors) > 0 || a.Code != 200 {
		t.Fatalf("%d %s (%v)", a.Code, a.Body.Bytes(), err)
	}
	return r.Data
}

func (f *rcFixture) serve(r *http.Request) answer {
	rec := httptest.NewRecorder()
	f.n.Store(0)
	f.h.ServeHTTP(rec, r)
	return answer{rec, f.n.Load()}
}

// post sends a GraphQL POST; token may be "".
func (f *rcFixture) post(t *testing.T, token, query string, vars map[string]any) answer {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	r := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	return f.serve(r)
}

// apqGet sends query as an Apollo client does over GET: the hash only,
// or (withQuery) hash and query; hdr adds request headers.
func (f *rcFixture) apqGet(t *testing.T, token, query string, vars map[string]any, withQuery bool, hdr ...string) answer {
	t.Helper()
	sum := sha256.Sum256([]byte(query))
	ext, _ := json.Marshal(map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}})
	q := url.Values{"extensions": {string(ext)}}
	if vars != nil {
		v, _ := json.Marshal(vars)
		q.Set("variables", string(v))
	}
	if withQuery {
		q.Set("query", query)
	}
	r := httptest.NewRequest(http.MethodGet, "/graphql?"+q.Encode(), nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	return f.serve(r)
}

func (f *rcFixture) counters() [4]uint64 {
	c := f.rc
	return [4]uint64{c.hits.Load(), c.misses.Load(), c.stale.Load(), c.bypasses.Load()}
}

const rcPage = `query($id: ID!) { goods(id: $id) { id name version priceRange { min max } totalStock
  specs { id name values { id name } } skus { id specValueIds sellPrice stock status version } } }`

// A warm anonymous page is the stored bytes: no statement, and no
// resolver ran (the goods resolver is the only way to the product-view
// cache, whose hit counter stays put), on both backends.
func TestResponseCacheHitRunsNothing(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		vars := map[string]any{"id": f.shoe}
		first := f.post(t, "", rcPage, vars)
		first.data(t)
		f.rc.Wait()
		views := f.cat.CacheStats().Hits
		before := f.counters()
		for i := range 5 {
			a := f.post(t, "", rcPage, vars)
			if a.body() != first.body() || a.statements != 0 {
				t.Fatalf("hit %d: %d statements, same bytes %v", i, a.statements, a.body() == first.body())
			}
		}
		if got := f.counters(); got[0]-before[0] != 5 || got[1] != before[1] {
			t.Errorf("hits/misses went %v -> %v, want 5 more hits and no miss", before, got)
		}
		if h := f.cat.CacheStats().Hits; h != views {
			t.Errorf("product-view cache hits went %d -> %d: the page was executed", views, h)
		}
		// The same document as a persisted query over GET shares the entry.
		if a := f.apqGet(t, "", rcPage, vars, false); a.body() != first.body() || a.statements != 0 {
			t.Errorf("APQ GET of the cached page: %d statements, %.80s", a.statements, a.body())
		}
	})
}

// An edit through this instance is never followed by an older answer: a
// price, a status (off shelf is null for customers), a new goods where a
// missing one was cached, and the list.
func TestResponseCacheEditsShowAtOnce(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		vars := map[string]any{"id": f.shirt}
		skus := func() []any { return f.post(t, "", rcPage, vars).data(t)["goods"].(map[string]any)["skus"].([]any) }
		sku := skus()[0].(map[string]any)
		f.rc.Wait()
		skus() // a hit
		upd := `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`
		f.post(t, f.admin, upd, map[string]any{"in": map[string]any{"itemId": sku["id"], "expectedVersion": sku["version"], "sellPrice": "1.23"}}).data(t)
		if got := skus()[0].(map[string]any)["sellPrice"]; got != "1.23" {
			t.Fatalf("after updateSku the anonymous page shows %v, want 1.23", got)
		}

		list := `{ goodsList(first: 50) { edges { node { id name } } pageInfo { hasNextPage } } }`
		listed := func() string { return fmt.Sprint(f.post(t, "", list, nil).data(t)) }
		missing := `query($id: ID!) { goods(id: $id) { id name } }`
		next := map[string]any{"id": int64(len(f.ids)) + 1}
		before := listed()
		if g := f.post(t, "", missing, next).data(t)["goods"]; g != nil {
			t.Fatalf("goods %v exists already: %v", next["id"], g)
		}
		f.rc.Wait()
		if listed() != before || f.post(t, "", missing, next).data(t)["goods"] != nil {
			t.Fatal("the cached list or missing goods changed by itself")
		}
		create := `mutation { createGoods(input: {name: "新品", code: "RC-NEW", status: ON_SHELF, defaultSku: {sellPrice: "5.00"}}) { id } }`
		id := f.post(t, f.admin, create, nil).data(t)["createGoods"].(map[string]any)["id"]
		if fmt.Sprint(id) != fmt.Sprint(next["id"]) {
			t.Fatalf("created goods %v, expected the next id %v", id, next["id"])
		}
		if g := f.post(t, "", missing, next).data(t)["goods"]; g == nil {
			t.Error("the goods created through this instance is still answered null from the cache")
		}
		if after := listed(); after == before || !strings.Contains(after, "新品") {
			t.Errorf("the list after createGoods is the cached one: %s", after)
		}

		status := `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: OFF_SHELF) { status } }`
		f.rc.Wait()
		f.post(t, "", rcPage, vars).data(t)
		f.post(t, f.admin, status, vars).data(t)
		if g := f.post(t, "", rcPage, vars).data(t)["goods"]; g != nil {
			t.Errorf("off shelf, the anonymous page still shows the goods: %v", g)
		}
		if strings.Contains(listed(), "纯棉圆领T恤") {
			t.Error("off shelf, the anonymous list still shows the goods")
		}
	})
}

// Stock is never older than the stock TTL: after a stock change that no
// catalog edit announces (adjustStock moves stock through the ledger), a
// request that starts a TTL after the change commits sees it.
func TestResponseCacheStockTTL(t *testing.T) {
	cfg := catalog.DefaultConfig()
	cfg.StockTTL = 300 * time.Millisecond
	eachCached(t, cfg, func(t *testing.T, f *rcFixture) {
		vars := map[string]any{"id": f.shirt}
		q := `query($id: ID!) { goods(id: $id) { skus { id stock } } }`
		adj := `mutation($in: AdjustStockInput!) { adjustStock(input: $in) { stock } }`
		sku := func() map[string]any {
			return f.post(t, "", q, vars).data(t)["goods"].(map[string]any)["skus"].([]any)[1].(map[string]any)
		}
		// A hit is only possible when the first read after the change
		// starts within a TTL of the read that stored the answer; on a
		// slow machine the adjustment alone may take longer, and such an
		// attempt proves nothing either way, so it is made again.
		for attempt := 1; ; attempt++ {
			cached := time.Now()
			first := sku()
			f.rc.Wait()
			f.post(t, f.admin, adj, map[string]any{"in": map[string]any{"itemId": first["id"], "delta": 7, "reason": "rc test"}}).data(t)
			changed := time.Now()
			want := fmt.Sprint(first["stock"].(float64) + 7)
			hits := f.rc.hits.Load()
			inWindow := changed.Sub(cached) < cfg.StockTTL
			for {
				start := time.Now()
				if got := fmt.Sprint(sku()["stock"]); got == want {
					break
				} else if start.Sub(changed) >= cfg.StockTTL {
					t.Fatalf("a read %v after the change still shows stock %s (TTL %v)", start.Sub(changed), got, cfg.StockTTL)
				}
				if time.Since(changed) > 10*time.Second {
					t.Fatal("the new stock never showed")
				}
			}
			if inWindow {
				if f.rc.hits.Load() == hits {
					t.Error("no read within the TTL was a hit: the cache did not serve the old stock meanwhile")
				}
				return
			}
			if attempt == 5 {
				t.Fatalf("5 attempts each took longer than the TTL (%v) from caching to the first read after the change", cfg.StockTTL)
			}
		}
	})
}

// The issue's privacy test: admin and customer read everything first (the
// product-view cache holds what they saw), then an anonymous caller sends
// the same documents twice and never gets costPrice, a disabled SKU or an
// off-shelf goods; an admin after it still gets them.
func TestResponseCacheAnonymousNeverGetsPrivateData(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		shirt := f.post(t, f.admin, `query($id: ID!) { goods(id: $id) { skus { id version } } }`, map[string]any{"id": f.shirt}).data(t)
		sku := shirt["goods"].(map[string]any)["skus"].([]any)[0].(map[string]any)
		f.post(t, f.admin, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { status } }`,
			map[string]any{"in": map[string]any{"itemId": sku["id"], "expectedVersion": sku["version"], "status": "DISABLED"}}).data(t)
		f.post(t, f.admin, `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: OFF_SHELF) { status } }`, map[string]any{"id": f.bag}).data(t)

		docs := []struct {
			name, query string
			vars        map[string]any
			cacheable   bool
		}{
			{"skus with disabled", `query($id: ID!) { goods(id: $id) { id skus(includeDisabled: true) { id status sellPrice } } }`, map[string]any{"id": f.shirt}, true},
			{"costPrice", `query($id: ID!) { goods(id: $id) { id skus(includeDisabled: true) { id status costPrice } } }`, map[string]any{"id": f.shirt}, false},
			{"off-shelf goods", `query($id: ID!) { goods(id: $id) { id name status } }`, map[string]any{"id": f.bag}, true},
			{"list", `{ goodsList(first: 20) { edges { node { id status skus(includeDisabled: true) { id status } } } } }`, nil, true},
		}
		private := func(body string) []string {
			var found []string
			for _, s := range []string{`"DISABLED"`, `"OFF_SHELF"`, fmt.Sprintf(`"id":"%d","name"`, f.bag)} {
				if strings.Contains(body, s) {
					found = append(found, s)
				}
			}
			if strings.Contains(body, `"costPrice":"`) {
				found = append(found, "costPrice")
			}
			return found
		}
		for _, tok := range []string{f.admin, f.customer, f.admin, f.customer} {
			for _, d := range docs {
				a := f.post(t, tok, d.query, d.vars)
				a.data(t)
				if cc := a.Header().Get("Cache-Control"); cc != "private, no-store" {
					t.Errorf("%s with a token: Cache-Control %q", d.name, cc)
				}
				if tok == f.admin && len(private(a.body())) == 0 && d.name != "off-shelf goods" {
					t.Fatalf("the admin's %s shows nothing private, the test proves nothing: %s", d.name, a.body())
				}
			}
		}
		if c := f.counters(); c[0] != 0 || c[1] != 0 {
			t.Fatalf("requests with a token touched the response cache: %v", c)
		}
		f.rc.Wait()
		for round := range 2 {
			before := f.counters()
			for _, d := range docs {
				a := f.post(t, "", d.query, d.vars)
				a.data(t)
				if p := private(a.body()); len(p) > 0 {
					t.Errorf("round %d, %s: an anonymous caller got %v: %s", round, d.name, p, a.body())
				}
			}
			f.rc.Wait()
			got := f.counters()
			if round == 1 && (got[0]-before[0] != 3 || got[3]-before[3] != 1) {
				t.Errorf("second anonymous round: hits %d, bypasses %d; want 3 hits (the cacheable documents) and 1 bypass (costPrice)", got[0]-before[0], got[3]-before[3])
			}
		}
		for _, d := range docs[:2] {
			if a := f.post(t, f.admin, d.query, d.vars); len(private(a.body())) == 0 {
				t.Errorf("the admin's %s after the anonymous caller's came from the cache: %s", d.name, a.body())
			}
		}
	})
}

// APQ over GET: a strong ETag of the bytes and Cache-Control public with the
// stock TTL; If-None-Match answers 304 with no body; an edit changes the
// tag; a token's answer is private, no-store and has no tag; an answer that
// is not cacheable is no-store.
func TestResponseCacheHTTPCaching(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		vars := map[string]any{"id": f.shirt}
		if a := f.apqGet(t, "", rcPage, vars, false); !strings.Contains(a.body(), "PERSISTED_QUERY_NOT_FOUND") || a.Header().Get("Cache-Control") != "no-store" || a.Header().Get("ETag") != "" {
			t.Fatalf("unknown hash: %s %v", a.body(), a.Header())
		}
		a := f.apqGet(t, "", rcPage, vars, true)
		a.data(t)
		tag := a.Header().Get("ETag")
		sum := sha256.Sum256(a.Body.Bytes())
		if !strings.HasPrefix(tag, `"`) || strings.HasPrefix(tag, "W/") || len(tag) < 20 {
			t.Errorf("ETag %q: want a strong tag", tag)
		}
		if cc := a.Header().Get("Cache-Control"); cc != "public, max-age=2" {
			t.Errorf("Cache-Control %q, want public, max-age=2 (the default stock TTL)", cc)
		}
		if v := a.Header().Get("Vary"); !strings.Contains(v, "Authorization") || !strings.Contains(v, "Accept") {
			t.Errorf("Vary %q", v)
		}
		f.rc.Wait()
		b := f.apqGet(t, "", rcPage, vars, false)
		if b.Header().Get("ETag") != tag || sha256.Sum256(b.Body.Bytes()) != sum || b.statements != 0 {
			t.Errorf("hash only: ETag %q, %d statements", b.Header().Get("ETag"), b.statements)
		}
		for _, inm := range []string{tag, "W/" + tag, `"other", ` + tag, "*"} {
			nm := f.apqGet(t, "", rcPage, vars, false, "If-None-Match", inm)
			if nm.Code != http.StatusNotModified || nm.Body.Len() != 0 || nm.Header().Get("ETag") != tag || nm.statements != 0 {
				t.Errorf("If-None-Match %s: %d, %d body bytes, ETag %q", inm, nm.Code, nm.Body.Len(), nm.Header().Get("ETag"))
			}
		}
		if nm := f.apqGet(t, "", rcPage, vars, false, "If-None-Match", `"other"`); nm.Code != 200 || nm.Body.Len() == 0 {
			t.Errorf("If-None-Match with another tag: %d", nm.Code)
		}
		tokened := f.apqGet(t, f.customer, rcPage, vars, false)
		if tokened.Header().Get("Cache-Control") != "private, no-store" || tokened.Header().Get("ETag") != "" {
			t.Errorf("with a token: Cache-Control %q, ETag %q", tokened.Header().Get("Cache-Control"), tokened.Header().Get("ETag"))
		}
		private := `query($id: ID!) { goods(id: $id) { skus { costPrice } } }`
		if p := f.apqGet(t, "", private, vars, true); p.Header().Get("Cache-Control") != "no-store" || p.Header().Get("ETag") != "" {
			t.Errorf("a query with costPrice over GET: Cache-Control %q, ETag %q", p.Header().Get("Cache-Control"), p.Header().Get("ETag"))
		}

		// An edit: the old tag no longer matches, the new answer has a new one.
		sku := a.data(t)["goods"].(map[string]any)["skus"].([]any)[0].(map[string]any)
		f.post(t, f.admin, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { sellPrice } }`,
			map[string]any{"in": map[string]any{"itemId": sku["id"], "expectedVersion": sku["version"], "sellPrice": "2.34"}}).data(t)
		c := f.apqGet(t, "", rcPage, vars, false, "If-None-Match", tag)
		if c.Code != 200 || c.Header().Get("ETag") == tag || !strings.Contains(c.body(), `"2.34"`) {
			t.Errorf("after an edit, If-None-Match with the old tag: %d, ETag %q, %s", c.Code, c.Header().Get("ETag"), c.body())
		}
	})
}
