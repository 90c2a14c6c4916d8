package web

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string, hdr ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRoutes(t *testing.T) {
	h := Handler(Options{})
	for _, tc := range []struct {
		path       string
		wantStatus int
		wantType   string
	}{
		{"/shop/", 200, "text/html; charset=utf-8"},
		{"/shop/goods/1", 200, "text/html; charset=utf-8"},
		{"/shop/orders", 200, "text/html; charset=utf-8"},
		{"/shop/goods/9007199254740993", 200, "text/html; charset=utf-8"},
		{"/shop/goods/0", 404, ""},
		{"/shop/goods/abc", 404, ""},
		{"/shop/goods/1/x", 404, ""},
		{"/shop/static/main.js", 200, "text/javascript; charset=utf-8"},
		{"/shop/static/product.js", 200, "text/javascript; charset=utf-8"},
		{"/shop/static/shop.css", 200, "text/css; charset=utf-8"},
		{"/shop/static/index.html", 404, ""},
		{"/shop/static/nope.js", 404, ""},
		{"/shop/nope", 404, ""},
	} {
		r := get(t, h, tc.path)
		if r.StatusCode != tc.wantStatus {
			t.Errorf("GET %s = %d, want %d", tc.path, r.StatusCode, tc.wantStatus)
			continue
		}
		if tc.wantType != "" && r.Header.Get("Content-Type") != tc.wantType {
			t.Errorf("GET %s Content-Type = %q, want %q", tc.path, r.Header.Get("Content-Type"), tc.wantType)
		}
	}
}

// Every file the page references must be served, or the page is blank in a
// browser while every Go test stays green.
func TestReferencedFilesExist(t *testing.T) {
	h := Handler(Options{})
	refs := map[string]bool{}
	html := body(t, get(t, h, "/shop/"))
	for _, m := range regexp.MustCompile(`(?:src|href)="(/shop/static/[^"]+)"`).FindAllStringSubmatch(html, -1) {
		refs[m[1]] = true
	}
	for name := range LoadAssets(staticFS()) {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		js := body(t, get(t, h, "/shop/static/"+name))
		for _, m := range regexp.MustCompile(`from "\./([^"]+)"`).FindAllStringSubmatch(js, -1) {
			refs["/shop/static/"+m[1]] = true
		}
	}
	if !refs["/shop/static/main.js"] || !refs["/shop/static/product.js"] {
		t.Fatalf("expected main.js and product.js among the references, got %v", refs)
	}
	for ref := range refs {
		if r := get(t, h, ref); r.StatusCode != 200 {
			t.Errorf("%s is referenced but GET = %d", ref, r.StatusCode)
		}
	}
}

func TestDemoTokenRendering(t *testing.T) {
	if html := body(t, get(t, Handler(Options{}), "/shop/")); strings.Contains(html, "STOREFRONT_DEMO_TOKEN") {
		t.Errorf("page without a demo token mentions STOREFRONT_DEMO_TOKEN:\n%s", html)
	}

	// A hostile value must stay a JS string: no closing the script element.
	tok := `abc</script><script>alert(1)</script>"'`
	r := get(t, Handler(Options{DemoToken: tok}), "/shop/goods/1")
	html := body(t, r)
	if strings.Contains(html, "</script><script>alert") {
		t.Fatalf("token not escaped:\n%s", html)
	}
	m := regexp.MustCompile(`<script nonce="([^"]+)">window\.STOREFRONT_DEMO_TOKEN = ("[^<]*");</script>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no nonce'd demo token script in:\n%s", html)
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "'nonce-"+m[1]+"'") {
		t.Errorf("CSP %q does not allow the script's nonce %q", csp, m[1])
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("page with a token has Cache-Control %q, want no-store", cc)
	}

	r2 := get(t, Handler(Options{DemoToken: "x"}), "/shop/")
	if n2 := regexp.MustCompile(`nonce="([^"]+)"`).FindStringSubmatch(body(t, r2)); n2 == nil || n2[1] == m[1] {
		t.Errorf("nonce not fresh per response: %v vs %q", n2, m[1])
	}
}

func TestStaticRevalidates(t *testing.T) {
	h := Handler(Options{})
	r := get(t, h, "/shop/static/product.js")
	etag := r.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag on a static file")
	}
	if r2 := get(t, h, "/shop/static/product.js", "If-None-Match", etag); r2.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the current ETag = %d, want 304", r2.StatusCode)
	}
}
