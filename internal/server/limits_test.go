package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
)

// aliasAttack is issue 15's request: n aliases of the 500-SKU shoe's SKUs
// (goods 3 in the demo catalog).
func aliasAttack(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: goods(id: 3) { skus { id specValueStr sellPrice stock } }", i)
	}
	return b.String() + " }"
}

var costRe = regexp.MustCompile(`query complexity (\d+) exceeds`)

// Every list is charged what it can really return: with a limit of 1 the
// refusal names the cost, which must be the documented model's.
func TestListCosts(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{MaxComplexity: 1, MaxAliases: 1000})
	for _, c := range []struct {
		query string
		vars  map[string]any
		want  int
	}{
		// goods 1 + skus 1 + 500 SKUs × 4 fields.
		{query: `{ goods(id: 3) { skus { id specValueStr sellPrice stock } } }`, want: 2002},
		{query: `{ goods(id: 3) { skus(includeDisabled: true) { id } } }`, want: 502},
		// 6 specs × (name + values: 1 + 500 × name).
		{query: `{ goods(id: 3) { specs { name values { name } } } }`, want: 1 + 1 + 6*(1+1+500)},
		// 500 + 6 - 1 values.
		{query: `{ goods(id: 3) { selectable { specValueId selectable } } }`, want: 1 + 1 + 505*2},
		// A list of scalars costs one per item.
		{query: `{ goods(id: 3) { skus { specValueIds } } }`, want: 1 + 1 + 500*(1+6)},
		// Only edges are multiplied by the page, not pageInfo.
		{query: `{ goodsList(first: 100) { edges { node { id } } pageInfo { hasNextPage } } }`, want: 1 + 1 + 100*2 + 2},
		{query: `{ goodsList(first: 5000) { edges { node { id } } } }`, want: 1 + 1 + 100*2},
		{query: `{ goodsList { edges { node { id } } } }`, want: 1 + 1 + 20*2},
		{query: `query($n: Int) { goodsList(first: $n) { edges { cursor } } }`, vars: map[string]any{"n": 50}, want: 1 + 1 + 50},
		{query: `{ myOrders(first: 5) { edges { node { lines { itemId quantity } } } } }`, want: 1 + 1 + 5*(1+1+50*2)},
		{query: `{ stockLedger(itemId: 1, first: 10) { edges { node { id remark } } } }`, want: 1 + 1 + 10*(1+2)},
		{query: `{ stockReconciliation(limit: 20000) { itemId goodsId stock ledgerSum diff } }`, want: 1 + 10_000*5},
		{query: `{ stockReconciliation { itemId } }`, want: 1 + 100},
		// A fragment costs what it costs where it is spread, page included.
		{query: `{ goods(id: 3) { ...G } } fragment G on Goods { skus { id } }`, want: 502},
		{query: `{ a: goodsList(first: 2) { ...C } b: goodsList(first: 3) { ...C } } fragment C on GoodsConnection { edges { cursor } }`, want: (1 + 1 + 2) + (1 + 1 + 3)},
	} {
		r := h.post(t, "", map[string]any{"query": c.query, "variables": c.vars})
		if r.code() != "QUERY_TOO_COMPLEX" {
			t.Errorf("%s: code %q %+v, want QUERY_TOO_COMPLEX", c.query, r.code(), r.Errors)
			continue
		}
		m := costRe.FindStringSubmatch(r.Errors[0].Message)
		if got, _ := strconv.Atoi(m[1]); len(m) < 2 || got != c.want {
			t.Errorf("%s: %q, want cost %d", c.query, r.Errors[0].Message, c.want)
		}
	}
}

// Issue 15: 240 aliases of the shoe's SKUs, a 9.8 MB answer, are refused
// by default before any statement, and would be by complexity alone.
func TestAliasAttackRefused(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{})
		r := h.post(t, "", map[string]any{"query": aliasAttack(240)})
		if r.code() != "QUERY_TOO_COMPLEX" || r.statements != 0 || !strings.Contains(r.Errors[0].Message, "aliases") {
			t.Fatalf("240 aliases: code %q, %d statements, %d bytes of data, errors %+v", r.code(), r.statements, len(r.Data), r.Errors)
		}
		if r := h.post(t, "", map[string]any{"query": aliasAttack(server.DefaultMaxAliases + 1)}); r.code() != "QUERY_TOO_COMPLEX" {
			t.Errorf("%d aliases: code %q", server.DefaultMaxAliases+1, r.code())
		}
		if r := h.post(t, "", map[string]any{"query": aliasAttack(server.DefaultMaxAliases)}); r.code() != "" {
			t.Errorf("%d aliases: %+v", server.DefaultMaxAliases, r.Errors)
		}
		h = newHardened(t, db, n, server.Options{MaxAliases: 1000})
		r = h.post(t, "", map[string]any{"query": aliasAttack(240)})
		if r.code() != "QUERY_TOO_COMPLEX" || r.statements != 0 || !strings.Contains(r.Errors[0].Message, "complexity") {
			t.Errorf("240 aliases with aliases allowed: code %q, %d statements, errors %+v", r.code(), r.statements, r.Errors)
		}
	})
}

// Fragments spreading fragments: walked at every spread, this 3 KB query
// is 10^9 fields (seconds of CPU before the limits answered); walked once
// per fragment it is refused at once. A test timeout is the failure.
func TestFragmentFanOutIsRefused(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{})
	const k = 60
	aliases := func(prefix, field, frag string) string {
		var b strings.Builder
		for i := range k {
			fmt.Fprintf(&b, " %s%d: %s { ...%s }", prefix, i, field, frag)
		}
		return b.String()
	}
	q := "{" + aliases("g", "goodsList", "C") + " }" +
		" fragment C on GoodsConnection {" + aliases("e", "edges", "E") + " }" +
		" fragment E on GoodsEdge {" + aliases("n", "node", "G") + " }" +
		" fragment G on Goods {" + aliases("s", "specs", "S") + " }" +
		" fragment S on Spec {" + aliases("v", "values", "V") + " }" +
		" fragment V on SpecValue { id }"
	if r := h.post(t, "", map[string]any{"query": q}); r.code() != "QUERY_TOO_COMPLEX" {
		t.Errorf("%d^5 fields through fragments: code %q %+v", k, r.code(), r.Errors)
	}
}

// Queries the shop, the README and the e2e product page send are within
// the default limits; their costs are logged for docs/operations.md.
func TestRealQueriesWithinDefaultLimits(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{})
	costs := newHardened(t, db, new(atomic.Int64), server.Options{MaxComplexity: 1, MaxAliases: 1000})
	for _, c := range []struct {
		name, query string
		vars        map[string]any
	}{
		{"shop product page (shoe)", `query Product($id: ID!, $selected: [ID!]!) { goods(id: $id) { id name specs { id name values { id name } }
		  priceRange { min max } totalStock selectable(selected: $selected) { specValueId selectable }
		  sku: skuBySelection(specValueIds: $selected) { id specValueStr sellPrice lineationPrice stock } } }`, map[string]any{"id": "3", "selected": []string{}}},
		{"shop goods list", `query GoodsList($first: Int!, $after: String) { goodsList(first: $first, after: $after) {
		  edges { node { id name priceRange { min max } totalStock } } pageInfo { hasNextPage endCursor } } }`, map[string]any{"first": 24}},
		{"README product page (T-shirt)", `{ goods(id: 1) { name priceRange { min max } totalStock specs { id name values { id name } } skus { id specValueStr sellPrice stock }
		  black_L: skuBySelection(specValueIds: ["1", "6"]) { id stock } L_black: skuBySelection(specValueIds: ["6", "1"]) { id } selectable(selected: ["1"]) { specValueId selectable } } }`, nil},
		{"every SKU field of the shoe", `{ goods(id: 3) { id name code status specType version specs { id name values { id name } }
		  skus { id goodsId specValueIds specValueStr specKey skuCode sellPrice lineationPrice costPrice stock version volume status } } }`, nil},
		{"bench product page (shoe)", `query($id: ID!, $sel: [ID!]) { goods(id: $id) { id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status }
		  priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }`, map[string]any{"id": "3"}},
	} {
		r := h.post(t, "", map[string]any{"query": c.query, "variables": c.vars})
		if r.code() != "" {
			t.Errorf("%s: %+v", c.name, r.Errors)
		}
		if r := costs.post(t, "", map[string]any{"query": c.query, "variables": c.vars}); len(r.Errors) > 0 {
			t.Logf("%s: %s; %d bytes answered", c.name, r.Errors[0].Message, len(r.Data))
		}
	}
}

// An answer that grows past the response-size limit ends with one
// QUERY_TOO_COMPLEX and no data; one within it is whole. A mutation is
// answered in full: what it did has happened.
func TestResponseSizeLimit(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{MaxResponseBytes: 10_000})
		shoe := `goods(id: 3) { skus { id specValueStr sellPrice stock } }` // about 40 KB
		r := h.post(t, "", map[string]any{"query": "{ " + shoe + " }"})
		if r.code() != "QUERY_TOO_COMPLEX" || len(r.Errors) != 1 || string(r.Data) != "null" || !strings.Contains(r.Errors[0].Message, "larger than the limit of 10000 bytes") {
			t.Errorf("the shoe's SKUs over a 10 000-byte limit: %d errors %+v, data %.100s", len(r.Errors), r.Errors, r.Data)
		}
		if r := h.post(t, "", map[string]any{"query": `{ goods(id: 1) { skus { id specValueStr sellPrice stock } } }`}); r.code() != "" || !bytes.Contains(r.Data, []byte(`"specValueStr"`)) {
			t.Errorf("the T-shirt's 12 SKUs: %+v", r.Errors)
		}
		r = h.post(t, h.admin, map[string]any{"query": `mutation { setGoodsStatus(goodsId: 3, status: ON_SHELF) { skus { id specValueStr sellPrice stock } } }`})
		if r.code() != "" || len(r.Data) < 10_000 {
			t.Errorf("a mutation's answer over the limit: %d bytes, %+v", len(r.Data), r.Errors)
		}
		if metrics := h.get(t, "/metrics").Body.String(); !strings.Contains(metrics, `storefront_graphql_errors_total{code="QUERY_TOO_COMPLEX",operation="goods"} 1`) {
			t.Errorf("/metrics lacks the refused answer")
		}
	})
}

func persisted(q string) map[string]any {
	sum := sha256.Sum256([]byte(q))
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
}

// A persisted query over the size limit is not registered: the request is
// refused with a message saying what to do, and the hash stays unknown.
// The same query sent plainly runs.
func TestPersistedQuerySizeLimit(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{})
	big := "{ __typename } #" + strings.Repeat("x", server.DefaultMaxPersistedQueryBytes)
	r := h.post(t, "", map[string]any{"query": big, "extensions": persisted(big)})
	if r.code() != "INVALID_INPUT" || !strings.Contains(r.Errors[0].Message, "at most 16384 bytes") || !strings.Contains(r.Errors[0].Message, "plain query") {
		t.Errorf("registering %d bytes: code %q %+v", len(big), r.code(), r.Errors)
	}
	if r := h.post(t, "", map[string]any{"extensions": persisted(big)}); r.code() != "PERSISTED_QUERY_NOT_FOUND" {
		t.Errorf("the refused query's hash: code %q, data %s", r.code(), r.Data)
	}
	if r := h.post(t, "", map[string]any{"query": big}); r.code() != "" {
		t.Errorf("the same query sent plainly: %+v", r.Errors)
	}
	small := "{ __typename } #" + strings.Repeat("x", server.DefaultMaxPersistedQueryBytes/2)
	h.post(t, "", map[string]any{"query": small, "extensions": persisted(small)})
	if r := h.post(t, "", map[string]any{"extensions": persisted(small)}); r.code() != "" {
		t.Errorf("a query under the limit by its hash: %+v", r.Errors)
	}
}

// Issue 15: distinct queries with a large comment, each registered with its
// hash, filled both query caches (1000 entries each): 200 of 1 MB held
// about 196 MB. Bounded in bytes, the heap they leave behind is about the
// bound, however many are sent.
func TestQueryCachesBoundedInBytes(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	const bound = 4 << 20
	// Registrations of 50 KB allowed, so that both caches are offered every query.
	h := newHardened(t, db, new(atomic.Int64), server.Options{QueryCacheBytes: bound, MaxPersistedQueryBytes: 1 << 20})
	pad := strings.Repeat("x", 50<<10)
	send := func(i int) {
		q := "{ __typename } #" + strconv.Itoa(i) + pad
		if r := h.post(t, "", map[string]any{"query": q, "extensions": persisted(q)}); r.code() != "" {
			t.Fatalf("query %d: %+v", i, r.Errors)
		}
	}
	send(-1) // first-use allocations out of the measurement
	before := heapAfterGC()
	const queries = 800 // 40 MB of query text
	for i := range queries {
		send(i)
	}
	grown := int64(heapAfterGC()) - int64(before)
	// Each of the two caches holds at most the bound (they share the text).
	if grown > 3*bound {
		t.Errorf("%d distinct 50 KB queries left %d MB on the heap; the caches are bounded at %d MB each", queries, grown>>20, bound>>20)
	}
	runtime.KeepAlive(h)
}

func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// With introspection off, no validation error names a field, argument,
// type or enum value the client did not write ("Did you mean …?"); with it
// on, the suggestions help.
func TestNoSuggestionsWithoutIntrospection(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	off := newHardened(t, db, new(atomic.Int64), server.Options{})
	on := newHardened(t, db, new(atomic.Int64), server.Options{Introspection: true})
	for _, q := range []string{
		`{ goods(id: 1) { nam } }`,                                  // field
		`{ goods(idd: 1) { name } }`,                                // argument
		`{ goodsList(status: ON_SHELVE) { edges { cursor } } }`,     // enum value
		`{ goods(id: 1) { ...F } } fragment F on Good { name }`,     // type
		`mutation { placeOrder(input: { itemz: [] }) { orderSn } }`, // input field
		`{ goods(id: 1) { specs } }`,                                // selection of a scalar-less field
	} {
		r := off.post(t, "", map[string]any{"query": q})
		if len(r.Errors) == 0 {
			t.Errorf("%s: no error", q)
			continue
		}
		for _, e := range r.Errors {
			if strings.Contains(e.Message, "Did you mean") {
				t.Errorf("introspection off, %s: %q", q, e.Message)
			}
		}
		r = on.post(t, "", map[string]any{"query": q})
		suggested := false
		for _, e := range r.Errors {
			suggested = suggested || strings.Contains(e.Message, "Did you mean")
		}
		if !suggested {
			t.Errorf("introspection on, %s: %+v", q, r.Errors)
		}
	}
}

// NewHandlers serves /metrics apart (serve's --metrics-addr): the public
// handler answers 404 there.
func TestMetricsApart(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{})
	if rec := h.get(t, "/metrics"); rec.Code != 200 || !strings.Contains(rec.Body.String(), "storefront_stock_negative_skus") {
		t.Errorf("New: GET /metrics = %d", rec.Code)
	}
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	split := server.NewHandlers(server.Options{DB: db, Signer: signer})
	rec := httptest.NewRecorder()
	split.Public.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("public handler: GET /metrics = %d, want 404", rec.Code)
	}
	rec = httptest.NewRecorder()
	split.Metrics.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "storefront_stock_negative_skus") {
		t.Errorf("metrics handler: GET /metrics = %d %.200s", rec.Code, rec.Body)
	}
	rec = httptest.NewRecorder()
	split.Public.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if rec.Code != 200 {
		t.Errorf("public handler: GET /healthz = %d", rec.Code)
	}
}
