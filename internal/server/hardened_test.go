package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
)

// hardened is the handler as serve builds it (catalog and inventory over a
// real database with the demo catalog), with Options to vary.
type hardened struct {
	h     http.Handler
	n     *atomic.Int64
	admin string
}

func newHardened(t *testing.T, db *store.DB, n *atomic.Int64, o server.Options) *hardened {
	t.Helper()
	signer, err := auth.NewSigner("server-test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.DefaultConfig()
	cfg.HTTP = o
	sf := app.New(db, nil, signer, cfg)
	t.Cleanup(sf.Close)
	if _, err := demo.Seed(context.Background(), sf.Catalog); err != nil {
		t.Fatal(err)
	}
	admin, err := signer.Issue("ops-admin", auth.Admin, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &hardened{h: sf.Handler(), n: n, admin: admin}
}

type gqlResp struct {
	status int
	Data   json.RawMessage
	Errors []struct {
		Message    string
		Extensions map[string]any
	}
	statements int64
}

func (r *gqlResp) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// post sends one GraphQL request body and counts the statements it caused.
func (h *hardened) post(t *testing.T, token string, body map[string]any) *gqlResp {
	t.Helper()
	raw, _ := json.Marshal(body)
	req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.n.Store(0)
	h.h.ServeHTTP(rec, req)
	r := &gqlResp{status: rec.Code, statements: h.n.Load()}
	if err := json.Unmarshal(rec.Body.Bytes(), r); err != nil {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body.Bytes(), err)
	}
	return r
}

func (h *hardened) get(t *testing.T, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

const deepQuery = `{ goodsList(first: 5) { edges { node { skus { id } } } } }` // depth 5

// Three aliases of a full page of goods with their SKUs: about 3 × 26 000.
const expensiveQuery = `query($first: Int) {
  a: goodsList(first: $first) { edges { node { id name skus { id specValueStr sellPrice stock } } } }
  b: goodsList(first: $first) { edges { node { id name skus { id specValueStr sellPrice stock } } } }
  c: goodsList(first: $first) { edges { node { id name skus { id specValueStr sellPrice stock } } } } }`

// Too deep or too expensive: QUERY_TOO_COMPLEX and not one statement sent,
// so no resolver ran. The same shapes within the limits are answered.
func TestQueryLimits(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{MaxDepth: 4})
		r := h.post(t, "", map[string]any{"query": deepQuery})
		if r.code() != "QUERY_TOO_COMPLEX" || r.statements != 0 || string(r.Data) != "" && string(r.Data) != "null" {
			t.Errorf("depth 5 with limit 4: code %q, %d statements, data %s", r.code(), r.statements, r.Data)
		}
		// Depth through a fragment counts where it is spread.
		r = h.post(t, "", map[string]any{"query": `{ goodsList { ...E } } fragment E on GoodsConnection { edges { node { skus { id } } } }`})
		if r.code() != "QUERY_TOO_COMPLEX" || r.statements != 0 {
			t.Errorf("depth 5 via a fragment: code %q, %d statements", r.code(), r.statements)
		}

		h = newHardened(t, db, n, server.Options{})
		if r := h.post(t, "", map[string]any{"query": deepQuery}); r.code() != "" || r.statements == 0 {
			t.Errorf("depth 5 under the default limit: code %q, %d statements", r.code(), r.statements)
		}
		// Connections are weighted by first, also when it is a variable.
		r = h.post(t, "", map[string]any{"query": expensiveQuery, "variables": map[string]any{"first": 100}})
		if r.code() != "QUERY_TOO_COMPLEX" || r.statements != 0 || !strings.Contains(r.Errors[0].Message, "complexity") {
			t.Errorf("3 × goodsList(first: 100): code %q, %d statements, %+v", r.code(), r.statements, r.Errors)
		}
		if r := h.post(t, "", map[string]any{"query": expensiveQuery, "variables": map[string]any{"first": 10}}); r.code() != "" {
			t.Errorf("3 × goodsList(first: 10): %+v", r.Errors)
		}

		metrics := h.get(t, "/metrics").Body.String()
		for _, want := range []string{
			`storefront_graphql_requests_total{operation="goodsList",outcome="rejected"} 1`,
			`storefront_graphql_requests_total{operation="goodsList",outcome="ok"} 2`,
			`storefront_graphql_errors_total{code="QUERY_TOO_COMPLEX",operation="goodsList"} 1`,
			`storefront_go_sql_in_use_connections`,
			`storefront_go_sql_idle_connections`,
		} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

// The playground's full introspection query nests ofType deeply; with
// introspection allowed it passes the depth limit, and without it it is
// refused, as is the playground page.
func TestIntrospectionSetting(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		on := newHardened(t, db, n, server.Options{Introspection: true, Playground: true})
		if r := on.post(t, "", map[string]any{"query": introspectionQuery}); r.code() != "" || !bytes.Contains(r.Data, []byte(`"stockReconciliation"`)) {
			t.Errorf("introspection on: %+v", r.Errors)
		}
		if rec := on.get(t, "/"); rec.Code != 200 {
			t.Errorf("playground on: GET / = %d", rec.Code)
		}
		off := newHardened(t, db, n, server.Options{})
		if r := off.post(t, "", map[string]any{"query": introspectionQuery}); r.code() != "FORBIDDEN" {
			t.Errorf("introspection off: code %q, answered %.200s", r.code(), r.Data)
		}
		if rec := off.get(t, "/"); rec.Code != http.StatusNotFound {
			t.Errorf("playground off: GET / = %d, want 404", rec.Code)
		}
		// __typename is not introspection of the schema and stays allowed.
		if r := off.post(t, "", map[string]any{"query": "{ __typename }"}); r.code() != "" {
			t.Errorf("__typename with introspection off: %+v", r.Errors)
		}
	})
}

// Automatic persisted queries: a hash alone is unknown at first; the hash
// with its query registers it; then the hash alone runs it. A hash that
// does not match its query is refused.
func TestAutomaticPersistedQueries(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{})
		q := `{ goods(id: 1) { name totalStock } }`
		sum := sha256.Sum256([]byte(q))
		ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
		if r := h.post(t, "", map[string]any{"extensions": ext}); r.code() != "PERSISTED_QUERY_NOT_FOUND" {
			t.Errorf("unknown hash: code %q %+v", r.code(), r.Errors)
		}
		first := h.post(t, "", map[string]any{"query": q, "extensions": ext})
		again := h.post(t, "", map[string]any{"extensions": ext})
		if first.code() != "" || again.code() != "" || string(first.Data) != string(again.Data) || !bytes.Contains(again.Data, []byte("纯棉")) {
			t.Errorf("register then hash only: %s %+v / %s %+v", first.Data, first.Errors, again.Data, again.Errors)
		}
		bad := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": strings.Repeat("0", 64)}}
		if r := h.post(t, "", map[string]any{"query": q, "extensions": bad}); r.code() != "INVALID_INPUT" {
			t.Errorf("mismatched hash: code %q, data %s", r.code(), r.Data)
		}
	})
}

// A request whose deadline has passed is answered UNAVAILABLE, with a
// message that says to retry, not INTERNAL and not a hang.
func TestRequestTimeoutIsUnavailable(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{RequestTimeout: time.Nanosecond})
		for _, c := range []struct{ token, query string }{
			{"", `{ goodsList(first: 5) { edges { node { id } } } }`},
			{h.admin, `{ stockReconciliation { itemId } }`},
		} {
			r := h.post(t, c.token, map[string]any{"query": c.query})
			if r.code() != "UNAVAILABLE" || !strings.Contains(r.Errors[0].Message, "retry") {
				t.Errorf("%s with an expired deadline: %s %+v", c.query, r.Data, r.Errors)
			}
		}
	})
}

// stockReconciliation is admin-only and lists exactly the SKUs whose stock
// is not their ledger sum; the periodic check's gauges say the same.
func TestStockReconciliation(t *testing.T) {
	testdb.EachCounted(t, func(t *testing.T, db *store.DB, n *atomic.Int64) {
		h := newHardened(t, db, n, server.Options{})
		q := map[string]any{"query": `{ stockReconciliation(limit: 10) { itemId goodsId stock ledgerSum diff } }`}
		if r := h.post(t, "", q); r.code() != "UNAUTHENTICATED" {
			t.Errorf("anonymous: code %q", r.code())
		}
		if r := h.post(t, h.admin, q); r.code() != "" || string(r.Data) != `{"stockReconciliation":[]}` {
			t.Errorf("clean demo catalog: %s %+v", r.Data, r.Errors)
		}
		// A write that bypasses the ledger: what reconciliation exists to find.
		if _, err := db.SQL.Exec("UPDATE sku SET stock = stock - 7 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		r := h.post(t, h.admin, q)
		var d struct {
			StockReconciliation []struct {
				ItemID, GoodsID        string
				Stock, LedgerSum, Diff int64
			}
		}
		if err := json.Unmarshal(r.Data, &d); err != nil || len(d.StockReconciliation) != 1 {
			t.Fatalf("after a write around the ledger: %s %+v", r.Data, r.Errors)
		}
		if got := d.StockReconciliation[0]; got.ItemID != "1" || got.Diff != -7 || got.Stock-got.LedgerSum != -7 {
			t.Errorf("diff = %+v, want item 1 with diff -7", got)
		}
	})
}

// Log lines written while serving a request carry its X-Request-Id.
func TestLogLinesCarryTheRequestID(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(server.LogHandler(slog.NewJSONHandler(&buf, nil))))
	t.Cleanup(func() { slog.SetDefault(prev) })
	h := newHardened(t, db, new(atomic.Int64), server.Options{RequestTimeout: time.Nanosecond})
	req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ goodsList { edges { cursor } } }"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "trace-me-42")
	rec := httptest.NewRecorder()
	h.h.ServeHTTP(rec, req)
	if rec.Header().Get("X-Request-Id") != "trace-me-42" {
		t.Errorf("X-Request-Id answered %q", rec.Header().Get("X-Request-Id"))
	}
	if !strings.Contains(buf.String(), `"request_id":"trace-me-42"`) {
		t.Errorf("the request's log line lacks its id:\n%s", buf.String())
	}
}

// Over the body limit is 413 whether the length is announced or not
// (chunked), and the body is not parsed.
func TestBodyLimit(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	h := newHardened(t, db, new(atomic.Int64), server.Options{MaxBodyBytes: 1 << 10})
	pad := strings.Repeat(" ", 2<<10)
	for _, chunked := range []bool{false, true} {
		body := `{"query":"{ __typename }"` + pad + `}`
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusRequestEntityTooLarge {
			t.Errorf("2 KiB body over a 1 KiB limit (chunked %v): %d %s", chunked, rec.Code, rec.Body)
		}
	}
	// Under the limit, chunked or not, the query runs.
	for _, chunked := range []bool{false, true} {
		req := httptest.NewRequest(http.MethodPost, "/graphql", strings.NewReader(`{"query":"{ __typename }"}`))
		req.Header.Set("Content-Type", "application/json")
		if chunked {
			req.ContentLength = -1
		}
		rec := httptest.NewRecorder()
		h.h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"__typename":"Query"`) {
			t.Errorf("small body (chunked %v): %d %s", chunked, rec.Code, rec.Body)
		}
	}
}
