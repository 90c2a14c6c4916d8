// Package admin serves the admin console at /admin/: static HTML, CSS and
// plain JavaScript modules embedded in the binary (no build step), talking
// only to the admin GraphQL API at /graphql with the token an admin signs in
// with. The console holds no secret of its own: the page is the same for
// everyone, and what it may do is what the token allows.
package admin

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

//go:embed static
var files embed.FS

// CSP is the /shop/ page's policy without the nonce: the console renders no
// inline script at all (no demo token goes into it), so only our own files run.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
	"base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves GET /admin/ (the console; the script routes by the URL's
// hash, so no goods id reaches the server in a path) and /admin/static/{file}.
// Mount it at "/admin/".
func Handler() http.Handler {
	static := mustSub()
	page, err := fs.ReadFile(static, "index.html")
	if err != nil {
		panic(err)
	}
	assets := loadAssets(static)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Content-Type-Options", "nosniff")
		// The token is typed into this page: no referrer leaves it, and no
		// shared or back-forward cache keeps the page.
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		_, _ = w.Write(page)
	})
	mux.HandleFunc("GET /admin/static/{file}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", a.contentType)
		w.Header().Set("X-Content-Type-Options", "nosniff")
		// Revalidate every time (a 304 through the ETag): a new binary never
		// leaves a tab running yesterday's console against today's API.
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("ETag", a.etag)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
	return mux
}

func mustSub() fs.FS {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return static
}

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// loadAssets reads the CSS and JS once; the ETag is a content hash.
func loadAssets(static fs.FS) map[string]asset {
	types := map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
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
