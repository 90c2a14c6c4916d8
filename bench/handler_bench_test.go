package bench

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/demo"
)

// BenchmarkHandler calls the storefront's handler directly (no network, no
// client): the server's own CPU and allocations per request, for profiling.
func BenchmarkHandler(b *testing.B) {
	sf, ids, cat := storefront(b)
	full := handlerOf(sf)
	shirt, shoe := ids[demo.TShirtCode], ids[demo.ShoeCode]
	shirtView, _ := cat.Goods(context.Background(), catalog.Viewer{}, shirt)
	bareH := handlerOf(bare(b, shirtView))
	for _, t := range []struct {
		name string
		h    http.Handler
		body []byte
	}{
		{"page12", full, pageBody(shirt, firstValue(b, cat, shirt))},
		{"page12-bare", bareH, pageBody(shirt, firstValue(b, cat, shirt))},
		{"typename", full, typenameBody},
		{"page500", full, pageBody(shoe, firstValue(b, cat, shoe))},
	} {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(t.body))
					req.Header.Set("Content-Type", "application/json")
					rec := httptest.NewRecorder()
					t.h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body.Bytes())
					}
				}
			})
		})
	}
}
