// Package web serves the demo storefront page at /shop/: static HTML, CSS and
// plain JavaScript modules embedded in the binary, talking only to the public
// GraphQL API at /graphql, so the page doubles as an example client.
package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"time"
)

//go:embed static
var files embed.FS

// Options configures the page.
type Options struct {
	// DemoToken, when set, is rendered into the page as
	// window.STOREFRONT_DEMO_TOKEN so that it is signed in as the demo
	// customer. Only for --demo: anyone who can load the page gets it.
	DemoToken string
}

// Handler serves GET /shop/ (goods list), /shop/goods/{id} (product page:
// the same HTML, the script reads the id from the URL so the URL can be
// opened directly) and /shop/static/{file}. Mount it at "/shop/".
func Handler(o Options) http.Handler {
	static := staticFS()
	page := template.Must(template.ParseFS(static, "index.html"))
	assets := loadAssets(static)

	mux := http.NewServeMux()
	servePage := func(w http.ResponseWriter, r *http.Request) {
		renderPage(w, r, page, o.DemoToken)
	}
	mux.HandleFunc("GET /shop/{$}", servePage)
	mux.HandleFunc("GET /shop/goods/{id}", func(w http.ResponseWriter, r *http.Request) {
		if id, err := strconv.ParseInt(r.PathValue("id"), 10, 64); err != nil || id < 1 {
			http.NotFound(w, r)
			return
		}
		servePage(w, r)
	})
	mux.HandleFunc("GET /shop/static/{file}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// Revalidate every time: the ETag makes that a 304, and a new binary
		// never leaves a browser running yesterday's script against today's API.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("ETag", a.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
	return mux
}

// renderPage writes the HTML shell. The nonce lets the one inline script (the
// demo token) run under a CSP that otherwise allows only our own files.
func renderPage(w http.ResponseWriter, r *http.Request, page *template.Template, demoToken string) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	nonce := base64.RawURLEncoding.EncodeToString(b[:]) // no + or /: nothing for html/template to escape
	var buf bytes.Buffer
	if err := page.Execute(&buf, struct{ Nonce, DemoToken string }{nonce, demoToken}); err != nil {
		http.Error(w, "rendering the page failed", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self' 'nonce-"+nonce+"'; "+
		"style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The page may carry a token: no shared or back-forward cache may keep it.
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(buf.Bytes())
}

func staticFS() fs.FS {
	s, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return s
}

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// loadAssets reads the CSS and JS once; the ETag is a content hash, so it
// changes exactly when a new binary ships a different file.
func loadAssets(static fs.FS) map[string]asset {
	types := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml",
	}
	out := map[string]asset{}
	entries, err := fs.ReadDir(static, ".")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		ct, ok := types[path.Ext(e.Name())]
		if !ok || e.IsDir() {
			continue
		}
		body, err := fs.ReadFile(static, e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(body)
		out[e.Name()] = asset{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	return out
}
