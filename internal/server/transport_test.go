package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"entgo.io/ent/dialect"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// GraphQL over HTTP as graphql-http's auditServer checks it (.ci/run runs
// the audit itself against the binary): media types, and the status codes
// and data entry of requests refused before execution.
func TestGraphQLOverHTTP(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	f := newRCFixture(t, db, new(atomic.Int64), catalog.DefaultConfig())
	const gqlResp = "application/graphql-response+json"
	send := func(method, accept, body, rawQuery string) answer {
		var r *http.Request
		if method == http.MethodGet {
			r = httptest.NewRequest(method, "/graphql?"+rawQuery, nil)
		} else {
			r = httptest.NewRequest(method, "/graphql", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
		}
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		return f.serve(r)
	}
	for _, tc := range []struct {
		name, accept, body string
		status             int
		media              string
		data               bool // a data entry is present
	}{
		{"ok, json", "application/json", `{"query":"{ __typename }"}`, 200, "application/json", true},
		{"ok, graphql-response", gqlResp, `{"query":"{ __typename }"}`, 200, gqlResp, true},
		{"ok, */*", "*/*", `{"query":"{ __typename }"}`, 200, "application/json", true},
		{"ok, no Accept", "", `{"query":"{ __typename }"}`, 200, "application/json", true},
		{"ok, Apollo's Accept", gqlResp + ",application/json;q=0.9", `{"query":"{ __typename }"}`, 200, gqlResp, true},
		{"ok, graphql-response refused by q=0", gqlResp + ";q=0, application/json", `{"query":"{ __typename }"}`, 200, "application/json", true},
		{"ok, only text/html", "text/html", `{"query":"{ __typename }"}`, 200, "application/json", true},
		{"parse error, json", "application/json", `{"query":"{"}`, 200, "application/json", false},
		{"parse error, graphql-response", gqlResp, `{"query":"{"}`, 400, gqlResp, false},
		{"validation error, json", "application/json", `{"query":"{ nope }"}`, 200, "application/json", false},
		{"validation error, graphql-response", gqlResp, `{"query":"{ nope }"}`, 400, gqlResp, false},
		{"coercion error, json", "application/json", `{"query":"query($id: ID!) { goods(id: $id) { id } }","variables":{"id":null}}`, 200, "application/json", false},
		{"coercion error, graphql-response", gqlResp, `{"query":"query($id: ID!) { goods(id: $id) { id } }","variables":{"id":null}}`, 400, gqlResp, false},
		{"coercion error (the audit's), json", "application/json", `{"query":"query($id: ID!) { __typename }","variables":{"id":null}}`, 200, "application/json", false},
		{"too complex, json", "application/json", `{"query":"{ a: __typename b: __typename c: __typename d: __typename e: __typename f: __typename g: __typename h: __typename i: __typename j: __typename k: __typename l: __typename m: __typename n: __typename o: __typename p: __typename q: __typename r: __typename s: __typename t: __typename u: __typename }"}`, 200, "application/json", false},
		{"field error, graphql-response", gqlResp, `{"query":"{ goods(id: 1) { skuBySelection(specValueIds: [\"999\"]) { id } } }"}`, 200, gqlResp, true},
		{"body not JSON", "application/json", `{"query":`, 400, "application/json", false},
		{"no body", gqlResp, ``, 400, gqlResp, false},
		{"no query", "", `{"qeury":"{ __typename }"}`, 400, "application/json", false},
		{"query not a string", "", `{"query":0}`, 400, "application/json", false},
		{"operationName not a string", "", `{"query":"{ __typename }","operationName":["x"]}`, 400, "application/json", false},
		{"variables a string", "", `{"query":"{ __typename }","variables":"x"}`, 400, "application/json", false},
		{"extensions an array", "", `{"query":"{ __typename }","extensions":["x"]}`, 400, "application/json", false},
		{"null parameters", "application/json", `{"query":"{ __typename }","variables":null,"operationName":null,"extensions":null}`, 200, "application/json", true},
	} {
		a := send(http.MethodPost, tc.accept, tc.body, "")
		var m map[string]json.RawMessage
		err := json.Unmarshal(a.Body.Bytes(), &m)
		_, hasData := m["data"]
		if err != nil || a.Code != tc.status || a.Header().Get("Content-Type") != tc.media || hasData != tc.data || (!tc.data && m["errors"] == nil) {
			t.Errorf("%s: %d %q %s (%v); want %d %s, data entry %v", tc.name, a.Code, a.Header().Get("Content-Type"), a.Body.Bytes(), err, tc.status, tc.media, tc.data)
		}
	}
	a := send(http.MethodGet, gqlResp, "", url.Values{"query": {"mutation { __typename }"}}.Encode())
	if a.Code != http.StatusMethodNotAllowed || a.Header().Get("Allow") != "POST" {
		t.Errorf("mutation over GET: %d, Allow %q", a.Code, a.Header().Get("Allow"))
	}
	a = send(http.MethodGet, "application/json", "", url.Values{"query": {"query($id: ID!) { goods(id: $id) { id } }"}, "variables": {`{"id":"1"}`}}.Encode())
	if a.Code != 200 || !strings.Contains(a.body(), `{"data":{"goods":{"id":"1"}}}`) {
		t.Errorf("GET with variables: %d %s", a.Code, a.body())
	}
}

// blockingDriver blocks every statement, while block is set, until its
// context ends, and says so on entered: a database that is slow exactly
// while a client gives up.
type blockingDriver struct {
	dialect.Driver
	block   *atomic.Bool
	entered chan struct{}
}

func (d blockingDriver) Query(ctx context.Context, q string, args, v any) error {
	if d.block.Load() {
		select {
		case d.entered <- struct{}{}:
		default:
		}
		<-ctx.Done()
		return ctx.Err()
	}
	return d.Driver.Query(ctx, q, args, v)
}

// records keeps every log record at any level.
type records struct {
	mu sync.Mutex
	rs []slog.Record
}

func (h *records) Enabled(context.Context, slog.Level) bool { return true }
func (h *records) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rs = append(h.rs, r)
	return nil
}
func (h *records) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *records) WithGroup(string) slog.Handler      { return h }

// A client that disconnects while its query waits for the database is not
// an internal error: nothing above debug level is logged, no INTERNAL is
// counted, and the disconnect is counted apart.
func TestClientDisconnectIsNoError(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			block, entered := new(atomic.Bool), make(chan struct{}, 1)
			db := testdb.Open(t, b, store.WithDriverWrapper(func(d dialect.Driver) dialect.Driver { return blockingDriver{d, block, entered} }))
			seed := catalog.New(db, catalog.DefaultConfig())
			ids, err := demo.Seed(context.Background(), seed)
			seed.Close()
			if err != nil {
				t.Fatal(err)
			}
			r := Compose(t, db, catalog.DefaultConfig()) // a catalog of its own, cold: the page must load
			signer, _ := auth.NewSigner("server-test-secret-0123456789")
			rc := NewResponseCache(r.Catalog, 0)
			t.Cleanup(rc.Close)
			h := New(Options{DB: db, Signer: signer, Resolver: r, ResponseCache: rc})
			done := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				if r.URL.Path == "/graphql" {
					done <- struct{}{}
				}
			}))
			t.Cleanup(srv.Close)

			logs := &records{}
			prev := slog.Default()
			slog.SetDefault(slog.New(LogHandler(logs)))
			t.Cleanup(func() { slog.SetDefault(prev) })

			block.Store(true)
			ctx, cancel := context.WithCancel(context.Background())
			body, _ := json.Marshal(map[string]any{"query": `query($id: ID!) { goods(id: $id) { id name skus { id } } }`, "variables": map[string]any{"id": ids[demo.ShoeCode]}})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			errc := make(chan error, 1)
			go func() {
				resp, err := srv.Client().Do(req)
				if err == nil {
					resp.Body.Close()
				}
				errc <- err
			}()
			select {
			case <-entered:
			case <-time.After(10 * time.Second):
				t.Fatal("the query never reached the database")
			}
			cancel()
			if err := <-errc; err == nil {
				t.Fatal("the cancelled request got an answer")
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the server never finished the cancelled request")
			}
			block.Store(false)

			logs.mu.Lock()
			debug := 0
			for _, r := range logs.rs {
				if r.Level > slog.LevelDebug {
					t.Errorf("logged at %v: %s", r.Level, r.Message)
				} else if strings.Contains(r.Message, "client closed") {
					debug++
				}
			}
			logs.mu.Unlock()
			if debug == 0 {
				t.Error("the disconnect was not logged at debug level")
			}
			resp, err := http.Get(srv.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			m := string(raw)
			for _, want := range []string{
				"storefront_graphql_client_disconnects_total 1\n",
				`storefront_graphql_requests_total{operation="goods",outcome="canceled"} 1` + "\n",
			} {
				if !strings.Contains(m, want) {
					t.Errorf("/metrics lacks %q", want)
				}
			}
			if strings.Contains(m, `code="INTERNAL"`) || strings.Contains(m, `outcome="error"`) {
				t.Errorf("/metrics counts the disconnect as an error:\n%s", grep(m, "storefront_graphql_"))
			}
		})
	}
}

func grep(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
