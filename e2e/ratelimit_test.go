package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"storefront/internal/testsupport/testdb"
)

// rawPost sends one GraphQL request and returns the HTTP status, the
// Retry-After header and the decoded answer.
func rawPost(t *testing.T, s *Server, token, query string) (int, string, *Response) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("decoding %d response %q: %v", resp.StatusCode, raw, err)
	}
	return resp.StatusCode, resp.Header.Get("Retry-After"), &r
}

// The defaults leave a shopper alone: 50 cart writes in a row from one
// address, as fast as one client sends them, all go through.
func TestRateLimitDefaultsLeaveAShopperAlone(t *testing.T) {
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	for i := range 50 {
		if status, _, r := rawPost(t, s, "", `mutation { cartCreate { id } }`); status != 200 || r.Code() != "" {
			t.Fatalf("anonymous write %d with the default limits: %d %+v", i, status, r.Errors)
		}
	}
}

// The rate and memory flags and their variables reach the server: at
// burst 3 the fourth anonymous write is HTTP 429 with Retry-After and
// RATE_LIMITED, counted on /metrics; the customer is not limited by it; the
// memory limit is the runtime's.
func TestRateLimitAndMemoryFlags(t *testing.T) {
	t.Setenv("STOREFRONT_RATE_ANONYMOUS", "0.001")
	s := Start(t, testdb.Spec(t, testdb.SQLite), "--rate-anonymous-burst", "3", "--memory-limit", "300000000")
	for i := range 3 {
		if status, _, r := rawPost(t, s, "", `mutation { cartCreate { id } }`); status != 200 || r.Code() != "" {
			t.Fatalf("anonymous write %d of a burst of 3: %d %+v", i, status, r.Errors)
		}
	}
	status, after, r := rawPost(t, s, "", `mutation { cartCreate { id } }`)
	if status != http.StatusTooManyRequests || after == "" || r.Code() != "RATE_LIMITED" || r.Data != nil {
		t.Errorf("the 4th anonymous write: %d, Retry-After %q, %+v, data %s", status, after, r.Errors, r.Data)
	}
	if status, _, r := rawPost(t, s, s.CustomerToken, `mutation { cartCreate { id } }`); status != 200 || r.Code() != "" {
		t.Errorf("the customer beside a limited address: %d %+v", status, r.Errors)
	}
	if v := metricValue(t, s, `storefront_rate_limited_total{kind="anonymous"}`); v != "1" {
		t.Errorf("storefront_rate_limited_total{kind=\"anonymous\"} = %q, want 1", v)
	}
	if v := metricValue(t, s, "go_gc_gomemlimit_bytes"); v != "3e+08" {
		t.Errorf("go_gc_gomemlimit_bytes = %q with --memory-limit 300000000", v)
	}
	_, body := getStatus(t, s.URL+"/metrics")
	if !strings.Contains(body, fmt.Sprintf("go_gc_gogc_percent %d", 400)) {
		t.Error("the GC target is not 400 beside the memory limit")
	}
}
