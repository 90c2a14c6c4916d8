package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// TestTracingOffAllocs measures the allocations of one request through the
// whole handler, as the binary builds it without --otel-endpoint: a
// product page, __typename and placeOrder. It logs the figures (compare
// them with the code before tracing: docs/benchmarks.md) and fails when a
// request allocates more than its bound, which tracing switched off must
// not move. Not a timing: AllocsPerRun counts, so a loaded machine does
// not change it.
func TestTracingOffAllocs(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "allocs.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	signer, err := auth.NewSigner("bench-secret-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	sf := app.New(db, nil, signer, app.DefaultConfig())
	t.Cleanup(sf.Close)
	ids, err := demo.Seed(ctx, sf.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	h := sf.Handler()
	shoe, err := sf.Catalog.Goods(ctx, catalog.Viewer{}, ids[demo.ShoeCode])
	if err != nil {
		t.Fatal(err)
	}
	shirt, err := sf.Catalog.Goods(ctx, catalog.Viewer{}, ids[demo.TShirtCode])
	if err != nil {
		t.Fatal(err)
	}
	customer, err := signer.Issue(demo.Customer, auth.Customer, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	order, _ := json.Marshal(map[string]any{"query": `mutation($id: ID!) { placeOrder(input: {items: [{itemId: $id, quantity: 1}]}) { orderSn } }`,
		"variables": map[string]any{"id": fmt.Sprint(shoe.EnabledSKUs()[0].ID)}})
	for _, c := range []struct {
		name  string
		body  []byte
		token string
		runs  int
	}{
		{"typename", typenameBody, "", 200},
		{"page12", pageBody(shirt.ID, shirt.Specs[0].Values[0].ID), "", 200},
		// Each run places an order of the shoe's first SKU (stock 1000).
		{"placeOrder", order, customer, 100},
	} {
		do := func() {
			req := httptest.NewRequest(http.MethodPost, "/graphql", bytes.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			if c.token != "" {
				req.Header.Set("Authorization", "Bearer "+c.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || bytes.Contains(rec.Body.Bytes(), []byte(`"errors"`)) {
				t.Fatalf("%s: %d %s", c.name, rec.Code, rec.Body.Bytes())
			}
		}
		do()
		n := testing.AllocsPerRun(c.runs, do)
		t.Logf("%s: %.0f allocations per request", c.name, n)
	}
}
