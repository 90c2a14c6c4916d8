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

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

// TestTracingOffAllocs measures the allocations of one request through the
// whole handler, as the binary builds it without --otel-endpoint: a
// product page, __typename and placeOrder; and, for comparison, with
// tracing on. It logs the figures (compare them with the code before
// tracing: docs/benchmarks.md). Not a timing: AllocsPerRun counts, so a
// loaded machine does not change it.
func TestTracingOffAllocs(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  *tracing.Config // nil: off
	}{
		{"off", nil},
		// For comparison only (no bound): every span recorded and handed
		// to an exporter that drops it; ratio 0 with the tail rules on
		// records every span and drops the request at its end.
		{"ratio1", &tracing.Config{Ratio: 1}},
		{"ratio0-tail", &tracing.Config{Ratio: 0, KeepErrors: true, KeepSlow: time.Second}},
	} {
		var tr *tracing.Tracing
		if c.cfg != nil {
			c.cfg.Exporter = tracetest.NewNoopExporter()
			var err error
			if tr, err = tracing.New(context.Background(), *c.cfg); err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
		}
		allocs(t, c.name, tr)
	}
}

// allocs logs one request's allocations through a handler built with tr.
func allocs(t *testing.T, name string, tr *tracing.Tracing) {
	ctx := context.Background()
	var wrap store.ConnectorWrapper
	if tr.On() {
		wrap = tr.Connector
	}
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "allocs.db"), store.WithConnectorWrapper(wrap))
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
	cfg := app.DefaultConfig()
	cfg.Tracing = tr
	sf := app.New(db, nil, signer, cfg)
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
		t.Logf("%s, tracing %s: %.0f allocations per request", c.name, name, n)
	}
}
