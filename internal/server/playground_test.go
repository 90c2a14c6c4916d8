package server_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"storefront/internal/platform/auth"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
	"storefront/web/admin"
)

// The playground page has the shop's headers: a CSP that frames it nowhere
// and runs no script but its own inline one (by its hash) and the CDN's,
// nosniff and no referrer.
func TestPlaygroundHeaders(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	signer, err := auth.NewSigner("playground-test-secret-0123")
	if err != nil {
		t.Fatal(err)
	}
	h := server.New(server.Options{DB: db, Signer: signer, Playground: true, Introspection: true})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "GraphiQL") {
		t.Fatalf("GET / = %d %.200s", rec.Code, rec.Body)
	}
	csp := rec.Header().Get("Content-Security-Policy")
	directives := map[string]string{}
	for d := range strings.SplitSeq(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	// Every directive the shop's pages have, with the same value where the
	// playground needs nothing else.
	for d := range strings.SplitSeq(admin.CSP, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		got, ok := directives[name]
		if !ok {
			t.Errorf("the playground's CSP lacks %s: %q", name, csp)
		}
		if (name == "default-src" || name == "base-uri" || name == "form-action" || name == "frame-ancestors" || name == "connect-src") && got != value {
			t.Errorf("the playground's %s is %q, the shop's %q", name, got, value)
		}
	}
	script := directives["script-src"]
	if strings.Contains(script, "unsafe") {
		t.Errorf("script-src %q allows unsafe sources", script)
	}
	inline := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(rec.Body.String(), -1)
	if len(inline) == 0 {
		t.Fatal("no inline script found in the page: the test no longer sees what it checks")
	}
	for _, m := range inline {
		sum := sha256.Sum256([]byte(m[1]))
		if h := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(script, h) {
			t.Errorf("script-src %q does not allow the page's inline script (%s): GraphiQL would not start", script, h)
		}
	}
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
		if got := rec.Header().Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}
