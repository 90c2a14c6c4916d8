// Package admin serves the admin console at /admin/: static HTML, CSS and
// plain JavaScript modules embedded in the binary (no build step), talking
// only to the admin GraphQL API at /graphql with the token an admin signs in
// with. The console holds no secret of its own: the page is the same for
// everyone, and what it may do is what the token allows.
package admin

import (
	"embed"
	"io/fs"
	"net/http"

	"storefront/web"
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
	assets := web.LoadAssets(static)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /admin/{$}", func(w http.ResponseWriter, r *http.Request) {
		web.WritePage(w, CSP, page) // the token is typed into this page
	})
	// The shop's way: revalidated every time (a 304 through the ETag), so a new
	// binary never leaves a tab running yesterday's console against today's API.
	mux.Handle("GET /admin/static/{file}", assets)
	return mux
}

func mustSub() fs.FS {
	static, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory
	}
	return static
}
