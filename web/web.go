// Package web serves the demo storefront page at /shop/: static HTML, CSS and
// plain JavaScript modules embedded in the binary, talking only to the public
// GraphQL API at /graphql, so the page doubles as an example client.
package web

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
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

// Handler serves GET /shop/ (goods list), /shop/orders (the customer's
// orders), /shop/goods/{id} (product page:
// the same HTML, the script reads the id from the URL so the URL can be
// opened directly) and /shop/static/{file}. Mount it at "/shop/".
func Handler(o Options) http.Handler {
	static := staticFS()
	page := template.Must(template.ParseFS(static, "index.html"))
	assets := LoadAssets(static)

	mux := http.NewServeMux()
	servePage := func(w http.ResponseWriter, r *http.Request) {
		renderPage(w, r, page, o.DemoToken)
	}
	mux.HandleFunc("GET /shop/{$}", servePage)
	mux.HandleFunc("GET /shop/orders", servePage)
	mux.HandleFunc("GET /shop/goods/{id}", func(w http.ResponseWriter, r *http.Request) {
		if id, err := strconv.ParseInt(r.PathValue("id"), 10, 64); err != nil || id < 1 {
			http.NotFound(w, r)
			return
		}
		servePage(w, r)
	})
	mux.Handle("GET /shop/static/{file}", assets)
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
	WritePage(w, "default-src 'none'; script-src 'self' 'nonce-"+nonce+"'; "+
		"style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		buf.Bytes())
}

// WritePage answers with an HTML page under csp and the headers every page
// of ours gets (the shop's, the console's, the GraphQL playground's): a
// token may be typed into or carried by the page, so no referrer leaves it
// and no shared or back-forward cache keeps it.
func WritePage(w http.ResponseWriter, csp string, page []byte) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(page)
}

func staticFS() fs.FS {
	s, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern above guarantees the directory
	}
	return s
}
