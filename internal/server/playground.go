package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"storefront/web"
	"strings"

	"github.com/99designs/gqlgen/graphql/playground"
)

// playgroundHandler is gqlgen's GraphiQL page with the headers the shop's
// pages get (web.renderPage): a CSP, frame-ancestors 'none' against
// clickjacking, nosniff and no referrer. The page is the same for every
// request, so it is rendered once and its one inline script is allowed by
// its hash; the other scripts come from the CDN gqlgen pins them on, each
// with its SRI hash in the page.
func playgroundHandler(title, endpoint string) http.Handler {
	var rec pageRecorder
	playground.Handler(title, endpoint).ServeHTTP(&rec, &http.Request{Method: http.MethodGet, URL: &url.URL{Path: "/"}})
	page := rec.Bytes()
	hashes := inlineScriptHashes(page)
	csp := "default-src 'none'; script-src " + strings.Join(hashes, " ") + " " + playgroundCDN + "; " +
		// GraphiQL's editors and dialogs add styles as they run, and a style
		// runs no code: inline styles stay allowed.
		"style-src 'unsafe-inline' " + playgroundCDN + "; font-src data: " + playgroundCDN + "; " +
		"connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.WritePage(w, csp, page) // a token may be typed into the headers editor
	})
}

// playgroundCDN is where gqlgen's page loads GraphiQL and React from.
const playgroundCDN = "https://cdn.jsdelivr.net"

var inlineScript = regexp.MustCompile(`(?s)<script>(.*?)</script>`)

// inlineScriptHashes are the CSP hash sources ('sha256-…') of page's inline
// scripts, as a browser hashes them: the text between the tags, as is.
func inlineScriptHashes(page []byte) []string {
	var out []string
	for _, m := range inlineScript.FindAllSubmatch(page, -1) {
		sum := sha256.Sum256(m[1])
		out = append(out, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'")
	}
	return out
}

// pageRecorder keeps what a handler writes.
type pageRecorder struct{ bytes.Buffer }

func (*pageRecorder) Header() http.Header { return http.Header{} }
func (*pageRecorder) WriteHeader(int)     {}
