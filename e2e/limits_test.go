package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"storefront/internal/testsupport/testdb"
)

// aliasAttack is issue 15's request: n aliases of the 500-SKU shoe's SKUs.
func aliasAttack(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		fmt.Fprintf(&b, " a%d: goods(id: 3) { skus { id specValueStr sellPrice stock } }", i)
	}
	return b.String() + " }"
}

// limitsPost sends one GraphQL body as it is (Server.Query has no
// extensions).
func limitsPost(t *testing.T, base string, body map[string]any) *Response {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := http.Post(base+"/graphql", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	var r Response
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("decoding a %d response: %v", resp.StatusCode, err)
	}
	return &r
}

func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// The binary as shipped, with no limit flag given, refuses over-limit
// queries: the limits are tested through server.New elsewhere, and only
// this shows the defaults serve applies are not, say, huge.
func TestLimitsDefaults(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			for _, c := range []struct{ name, query string }{
				{"240 aliases of the shoe's SKUs", aliasAttack(240)},
				{"100 goods with all their SKUs", `{ goodsList(first: 100) { edges { node { skus { id specValueStr sellPrice stock } } } } }`},
			} {
				if r := s.Query(t, "", c.query, nil); r.Code() != "QUERY_TOO_COMPLEX" || len(r.Data) > 10 {
					t.Errorf("%s: code %q, %d bytes of data", c.name, r.Code(), len(r.Data))
				}
			}
			page := `query($id: ID!, $selected: [ID!]!) { goods(id: $id) { id name specs { id name values { id name } }
			  priceRange { min max } totalStock selectable(selected: $selected) { specValueId selectable } } }`
			if r := s.Query(t, "", page, map[string]any{"id": "3", "selected": []string{}}); r.Code() != "" || !strings.Contains(string(r.Data), `"selectable"`) {
				t.Errorf("the shoe's product page: %+v", r.Errors)
			}
			big := "{ __typename } #" + strings.Repeat("x", 16<<10)
			sum := sha256.Sum256([]byte(big))
			ext := map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hex.EncodeToString(sum[:])}}
			if r := limitsPost(t, s.URL, map[string]any{"query": big, "extensions": ext}); r.Code() != "INVALID_INPUT" {
				t.Errorf("registering a 16 KB persisted query: code %q %+v", r.Code(), r.Errors)
			}
			if code, _ := getStatus(t, s.URL+"/metrics"); code != 200 {
				t.Errorf("GET /metrics on the public listener by default = %d", code)
			}
		})
	}
}

// The limit flags and --metrics-addr reach the server; the variables do
// too (STOREFRONT_METRICS_ADDR).
func TestLimitsFlags(t *testing.T) {
	metricsAddr := freeAddr(t)
	t.Setenv("STOREFRONT_METRICS_ADDR", metricsAddr)
	s := Start(t, testdb.Spec(t, testdb.SQLite), "--max-response-bytes", "10000", "--max-query-aliases", "2", "--introspection=false")

	if r := s.Query(t, "", `{ goods(id: 3) { skus { id specValueStr sellPrice stock } } }`, nil); r.Code() != "QUERY_TOO_COMPLEX" || string(r.Data) != "null" {
		t.Errorf("a 40 KB answer over --max-response-bytes 10000: code %q, %d bytes of data", r.Code(), len(r.Data))
	}
	if r := s.Query(t, "", `{ a: goods(id: 1) { id } b: goods(id: 1) { id } c: goods(id: 1) { id } }`, nil); r.Code() != "QUERY_TOO_COMPLEX" {
		t.Errorf("3 aliases over --max-query-aliases 2: code %q", r.Code())
	}
	if r := s.Query(t, "", `{ goods(id: 1) { nam } }`, nil); len(r.Errors) == 0 || strings.Contains(r.Errors[0].Message, "Did you mean") {
		t.Errorf("a typo with introspection off: %+v", r.Errors)
	}

	if code, _ := getStatus(t, s.URL+"/metrics"); code != http.StatusNotFound {
		t.Errorf("GET /metrics on the public listener with --metrics-addr = %d, want 404", code)
	}
	code, body := getStatus(t, "http://"+metricsAddr+"/metrics")
	if code != 200 || !strings.Contains(body, `storefront_graphql_errors_total{code="QUERY_TOO_COMPLEX",operation="goods"} 2`) {
		t.Errorf("GET /metrics on --metrics-addr = %d %.300s", code, body)
	}
}
