package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync/atomic"
)

type requestIDKey struct{}

// requestID tags each request with an id, returned in X-Request-Id, so a
// client's report can be found in the logs. withRequestID puts it in the
// request's context for them (LogHandler), where anything may log: on
// /graphql after cachedFront, whose stored answers log nothing and so
// need no copy of the request to carry it.
func requestID(next http.Handler) http.Handler {
	// A random per-process prefix and a counter: unique across instances and
	// restarts without a getrandom call on every request of the hot path.
	var b [4]byte
	_, _ = rand.Read(b[:])
	prefix := hex.EncodeToString(b[:]) + "-"
	var n atomic.Uint64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := header(r.Header, "X-Request-Id")
		// A client's id is echoed and logged: printable ASCII only.
		if id == "" || len(id) > 64 || !printableASCII(id) {
			var buf [32]byte
			id = string(strconv.AppendUint(append(buf[:0], prefix...), n.Add(1), 16))
		}
		w.Header()["X-Request-Id"] = []string{id}
		next.ServeHTTP(w, r)
	})
}

// withRequestID puts the id requestID answers with in the request's context.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), requestIDKey{}, header(w.Header(), "X-Request-Id"))))
	})
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

// RequestID returns the id of the current request ("" outside one).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
