package admin

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"storefront/web"
)

func get(t *testing.T, h http.Handler, path string) (*http.Response, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
	r := rec.Result()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return r, string(b)
}

func TestRoutes(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		path       string
		wantStatus int
		wantType   string
	}{
		{"/admin/", 200, "text/html; charset=utf-8"},
		{"/admin/static/main.js", 200, "text/javascript; charset=utf-8"},
		{"/admin/static/editor.js", 200, "text/javascript; charset=utf-8"},
		{"/admin/static/admin.css", 200, "text/css; charset=utf-8"},
		{"/admin/static/index.html", 404, ""},
		{"/admin/static/nope.js", 404, ""},
		{"/admin/goods/1", 404, ""}, // the editor's address is a hash: no id reaches the server
		{"/admin/nope", 404, ""},
	} {
		r, _ := get(t, h, tc.path)
		if r.StatusCode != tc.wantStatus {
			t.Errorf("GET %s = %d, want %d", tc.path, r.StatusCode, tc.wantStatus)
			continue
		}
		if tc.wantType != "" && r.Header.Get("Content-Type") != tc.wantType {
			t.Errorf("GET %s Content-Type = %q, want %q", tc.path, r.Header.Get("Content-Type"), tc.wantType)
		}
	}
}

// The console's policy is the shop's, without the nonce the shop needs for
// its demo token: the console has no inline script to allow.
func TestHeadersAreTheShops(t *testing.T) {
	shop, _ := get(t, web.Handler(web.Options{DemoToken: "x"}), "/shop/")
	r, html := get(t, Handler(), "/admin/")
	wantCSP := regexp.MustCompile(` 'nonce-[^']+'`).ReplaceAllString(shop.Header.Get("Content-Security-Policy"), "")
	if got := r.Header.Get("Content-Security-Policy"); got != wantCSP {
		t.Errorf("CSP = %q, want the shop's without its nonce: %q", got, wantCSP)
	}
	for _, k := range []string{"X-Content-Type-Options", "Referrer-Policy", "Cache-Control"} {
		if got, want := r.Header.Get(k), shop.Header.Get(k); got != want || got == "" {
			t.Errorf("%s = %q, want the shop's %q", k, got, want)
		}
	}
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(html, -1) {
		if !strings.Contains(tag, ` src="/admin/static/`) {
			t.Errorf("inline script %s: the console's CSP allows only its own files", tag)
		}
	}
	if m := regexp.MustCompile(`\son[a-z]+=`).FindString(html); m != "" {
		t.Errorf("inline handler %q: the console's CSP would block it", m)
	}
}

// Every module the page imports must be served, or the console is blank in
// a browser while every Go test stays green.
func TestReferencedFilesExist(t *testing.T) {
	h := Handler()
	refs := map[string]bool{}
	_, html := get(t, h, "/admin/")
	for _, m := range regexp.MustCompile(`(?:src|href)="(/admin/static/[^"]+)"`).FindAllStringSubmatch(html, -1) {
		refs[m[1]] = true
	}
	for name := range web.LoadAssets(mustSub()) {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		_, js := get(t, h, "/admin/static/"+name)
		for _, m := range regexp.MustCompile(`from "\./([^"]+)"`).FindAllStringSubmatch(js, -1) {
			refs["/admin/static/"+m[1]] = true
		}
	}
	if len(refs) < 5 {
		t.Fatalf("found only %v; is the page wired up?", refs)
	}
	for ref := range refs {
		if r, _ := get(t, h, ref); r.StatusCode != 200 {
			t.Errorf("%s is referenced but answers %d", ref, r.StatusCode)
		}
	}
}

// The token goes to this server only: every request the scripts make is a
// path on the page's origin, never an absolute URL.
func TestScriptsFetchOnlyThisServer(t *testing.T) {
	static := mustSub()
	for name := range web.LoadAssets(static) {
		if !strings.HasSuffix(name, ".js") {
			continue
		}
		body, err := fs.ReadFile(static, name)
		if err != nil {
			t.Fatal(err)
		}
		js := string(body)
		for _, m := range regexp.MustCompile(`fetch\(([^,)]+)`).FindAllStringSubmatch(js, -1) {
			if m[1] != `"/graphql"` {
				t.Errorf("%s fetches %s; the console may only POST /graphql on its own server", name, m[1])
			}
		}
		if regexp.MustCompile(`https?://|localStorage|document\.cookie|XMLHttpRequest|sendBeacon|WebSocket`).MatchString(js) {
			t.Errorf("%s reaches for another server or longer-lived storage than sessionStorage", name)
		}
	}
}
