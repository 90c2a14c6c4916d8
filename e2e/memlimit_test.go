package e2e

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	coderws "github.com/coder/websocket"

	"storefront/internal/testsupport/testdb"
)

// Without --memory-limit the runtime's limit is the caches' bounds
// (--cache-max-cost, --response-cache-max-cost when the response cache is
// on, twice --query-cache-bytes) plus 48 MiB, and the bound on WebSocket
// connections is a quarter of it at 40 KiB a connection; GOMEMLIMIT, when
// set, wins for both.
func TestDerivedMemoryLimit(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "") // restored after the test…
	os.Unsetenv("GOMEMLIMIT")  // …whose servers run without it
	const headroom = 48 << 20
	for _, tc := range []struct {
		name       string
		flags      []string
		want       int64
		gomemlimit string // the environment's GOMEMLIMIT, which wins
	}{
		{"defaults", nil, 64<<20 + 64<<20 + 2*16<<20 + headroom, ""},
		{"caches given", []string{"--cache-max-cost", "10000000", "--response-cache-max-cost", "5000000", "--query-cache-bytes", "1000000"},
			10000000 + 5000000 + 2*1000000 + headroom, ""},
		{"no response cache", []string{"--cache-max-cost", "10000000", "--response-cache=false", "--response-cache-max-cost", "5000000", "--query-cache-bytes", "1000000"},
			10000000 + 2*1000000 + headroom, ""},
		{"GOMEMLIMIT", nil, 400 << 20, "400MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.gomemlimit != "" {
				t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			}
			s := Start(t, testdb.Spec(t, testdb.SQLite), tc.flags...)
			v := metricValue(t, s, "go_gc_gomemlimit_bytes")
			if got, err := strconv.ParseFloat(v, 64); err != nil || int64(got) != tc.want {
				t.Errorf("go_gc_gomemlimit_bytes = %q, want %d", v, tc.want)
			}
			conns := `"live_max_conns":` + strconv.FormatInt(max(tc.want/4/(40<<10), 64), 10)
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(s.stderr.String(), conns) {
				if time.Now().After(deadline) {
					t.Fatalf("the log does not say %s:\n%s", conns, s.stderr)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// STOREFRONT_LIVE_MAX_CONNS reaches the server: with 2, a third WebSocket
// connection is refused with 503 and Retry-After.
func TestLiveMaxConnsVariable(t *testing.T) {
	t.Setenv("STOREFRONT_LIVE_MAX_CONNS", "2")
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	ws := "ws" + strings.TrimPrefix(s.URL, "http") + "/graphql"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 3 {
		c, resp, err := coderws.Dial(ctx, ws, &coderws.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if i < 2 {
			if err != nil {
				t.Fatalf("connection %d: %v", i+1, err)
			}
			defer c.CloseNow()
			continue
		}
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("a third connection at STOREFRONT_LIVE_MAX_CONNS=2: %v %+v, want 503 with Retry-After", err, resp)
		}
	}
}
