package server

import (
	"context"
	"net/http"
	"sync"
	"time"
	"unsafe"
)

// cachedFront answers an anonymous request whose exact bytes were answered
// from the response cache before, ahead of everything else on /graphql:
// such a request carries no token (privateNoStore and the token middleware
// would do nothing), the body is read whole here within the body limit,
// the Idempotency-Key header means nothing to a stored query's answer, and
// gqlgen's handler would only pick this transport to look the same alias
// up. A stored answer then costs a read of the body, one lookup of its
// alias and the check that the answer is current, and nothing of the
// handler chain (its copies of the request, contexts and header
// canonicalisations, which would cost a hit more than the lookup does).
//
// Every other request goes down the chain as before. One whose bytes were
// read here carries them (and what the alias lookup found) to Do in its
// context, so the body is read and the alias looked up once.
func (t *httpTransport) cachedFront(maxBody int64, next http.Handler) http.Handler {
	if t.cache == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		get := r.Method == http.MethodGet
		if header(r.Header, "Authorization") != "" || !t.Supports(r) ||
			!get && (r.ContentLength < 0 || r.ContentLength > maxBody) {
			// A token, another transport, or a body limitBody must see
			// first (chunked, or refused with 413).
			next.ServeHTTP(w, r)
			return
		}
		raw, buf, err := readRaw(r)
		defer putBuf(buf)
		var alias string
		aliased := false
		if err == nil {
			// The alias is built in a pooled buffer and looked up without
			// a copy: ristretto's Get hashes its key and keeps no reference.
			kb := aliasBufs.Get().(*[]byte)
			defer aliasBufs.Put(kb)
			*kb = appendAlias((*kb)[:0], get, raw)
			var a *cachedAnswer
			if a, aliased = t.cache.lookupAlias(unsafe.String(unsafe.SliceData(*kb), len(*kb))); a != nil {
				t.hit(w, r, responseType(header(r.Header, "Accept")), get, a, start)
				return
			}
			alias = string(*kb)
		}
		f := &front{raw: raw, err: err, alias: alias, aliased: aliased}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), frontKey{}, f)))
	})
}

// front is what cachedFront learnt of a request it passed on: its bytes
// (valid while the request is served), or the error reading them, and its
// alias and whether the alias was known.
type front struct {
	raw     []byte
	err     error
	alias   string
	aliased bool
}

type frontKey struct{}

// aliasBufs hold aliases being looked up; any alias fits without growing.
var aliasBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1+maxRawAlias); return &b }}

// frontOf is cachedFront's reading of r, or nil when it did not read r.
func frontOf(r *http.Request) *front {
	f, _ := r.Context().Value(frontKey{}).(*front)
	return f
}

// header is h.Get(key) for a key already in canonical form: the server
// stores request headers canonicalised, so the lookup needs no
// canonicalisation of key.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
