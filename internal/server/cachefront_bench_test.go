package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/testsupport/testdb"
)

// BenchmarkCachedPage is one anonymous product-page POST answered from the
// response cache, through the handler serve builds (no network): what a
// hit costs in front of the stored bytes, allocations included. The
// request is built once and its body rewound, so the figure is the
// handler's alone.
func BenchmarkCachedPage(b *testing.B) {
	n := new(atomic.Int64)
	cfg := catalog.DefaultConfig()
	cfg.StockTTL = time.Hour // every request a hit: no revalidation by the clock
	f := newRCFixture(b, testdb.Open(b, testdb.SQLite, testdb.CountStatements(n)), n, cfg)
	body, _ := json.Marshal(map[string]any{"query": rcPage, "variables": map[string]any{"id": f.shirt}})
	rd := bytes.NewReader(body)
	r := httptest.NewRequest(http.MethodPost, "/graphql", rd)
	r.Header.Set("Content-Type", "application/json")
	w := &discardWriter{h: http.Header{}}
	serve := func() {
		rd.Reset(body)
		clear(w.h)
		f.h.ServeHTTP(w, r)
	}
	serve()
	f.rc.Wait()
	hits := f.rc.hits.Load()
	n.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		serve()
	}
	b.StopTimer()
	if f.rc.hits.Load()-hits != uint64(b.N) || n.Load() != 0 {
		b.Fatalf("%d hits and %d statements for %d requests", f.rc.hits.Load()-hits, n.Load(), b.N)
	}
}

// discardWriter is a ResponseWriter that keeps nothing but its header map.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}
