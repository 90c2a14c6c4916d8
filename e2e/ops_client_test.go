package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"storefront/internal/platform/auth"
)

// e2eSecret is the JWT secret the harness gives every server it starts.
const e2eSecret = "e2e-secret-0123456789abcdef"

// tokenFor signs a token the harness's servers accept, for any user.
func tokenFor(t testing.TB, sub string, role auth.Role) string {
	t.Helper()
	s, err := auth.NewSigner(e2eSecret)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.Issue(sub, role, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// loadClient has short timeouts of its own: a fault test must see a hung
// server as an error, not hang with it.
var loadClient = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}

// post sends one GraphQL request and returns the response and HTTP status;
// unlike Server.Query it is safe in goroutines (no t.Fatal) and returns
// transport errors, which the fault tests expect.
func post(ctx context.Context, url, token, idemKey, query string, vars map[string]any) (*Response, int, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/graphql", bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := loadClient.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, resp.StatusCode, err
	}
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, resp.StatusCode, fmt.Errorf("decoding %d response %q: %w", resp.StatusCode, raw, err)
	}
	return &r, resp.StatusCode, nil
}

// reconcileCLI runs `storefront reconcile` against spec and returns its
// output and whether it exited 0 (no difference, no negative stock).
func reconcileCLI(t *testing.T, spec string) (string, bool) {
	t.Helper()
	out, err := exec.Command(binary(t), "reconcile", "--db", spec).CombinedOutput()
	return string(out), err == nil
}

// metricValue reads one sample line's value from a server's /metrics
// ("" when the series is absent).
func metricValue(t *testing.T, s *Server, series string) string {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			return v
		}
	}
	return ""
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }
