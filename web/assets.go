package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"time"
)

// Assets are the CSS, JS and SVG files of one embedded folder, read once,
// each with an ETag that is a content hash: it changes exactly when a new
// binary ships a different file. The shop and the admin console serve theirs
// through it.
type Assets map[string]asset

type asset struct {
	body        []byte
	contentType string
	etag        string
}

// LoadAssets reads the files of static's top level that have a known type.
func LoadAssets(static fs.FS) Assets {
	types := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml",
	}
	out := Assets{}
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

// ServeHTTP answers the file named by the route's {file} wildcard.
func (as Assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := as[r.PathValue("file")]
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
}
