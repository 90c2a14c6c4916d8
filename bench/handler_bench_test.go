package bench

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"storefront/demo"
)

// BenchmarkHandler calls the storefront's handler directly (no network, no
// client): the server's own CPU and allocations per request, for profiling.
func BenchmarkHandler(b *testing.B) {
	sf, ids, cat := storefront(b)
	h := handlerOf(sf)
	shirt, shoe := ids[demo.TShirtCode], ids[demo.ShoeCode]
	for _, t := range []struct {
		name string
		body []byte
	}{
		{"page12", pageBody(shirt, firstValue(b, cat, shirt))},
		{"typename", typenameBody},
		{"page500", pageBody(shoe, firstValue(b, cat, shoe))},
	} {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(t.body))
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
					}
				}
			})
		})
	}
}
