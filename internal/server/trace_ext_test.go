package server_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"storefront/internal/app"
	"storefront/internal/platform/tracing"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
)

// With tracing on, each GraphQL operation is a span under the request's
// server span, named by the operation's name, with its type and the code
// of its error; an answer such as UNAUTHENTICATED is not a failure of the
// service, so the span's status stays unset.
func TestOperationSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := tracing.New(context.Background(), tracing.Config{Ratio: 1, Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	cfg := app.DefaultConfig()
	cfg.Tracing = tr
	a := app.New(testdb.Open(t, testdb.SQLite), nil, nil, cfg)
	t.Cleanup(a.Close)
	h := a.Handler()
	ans := gqltest.Do(t, h, "", `mutation Buy { placeOrder(input: {items: [{itemId: "1", quantity: 1}]}) { orderSn } }`, nil)
	if ans.Code() == "" {
		t.Fatalf("an anonymous placeOrder answered no error: %+v", ans)
	}
	gqltest.Do(t, h, "", `{ __typename }`, nil)
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := map[string]tracetest.SpanStub{}
	servers := map[string]bool{} // the server spans' ids
	for _, s := range exp.GetSpans() {
		spans[s.Name] = s
		if s.Name == "POST /graphql" {
			servers[s.SpanContext.SpanID().String()] = true
		}
	}
	buy, ok := spans["Buy"]
	if !ok {
		t.Fatalf("no span Buy among %v", spans)
	}
	want := map[string]string{"graphql.operation.type": "mutation", "graphql.operation.name": "Buy", "graphql.error.code": ans.Code()}
	for _, kv := range buy.Attributes {
		if w, ok := want[string(kv.Key)]; ok && kv.Value.Emit() != w {
			t.Errorf("Buy's %s = %q, want %q", kv.Key, kv.Value.Emit(), w)
		}
		delete(want, string(kv.Key))
	}
	if len(want) > 0 {
		t.Errorf("Buy lacks %v", want)
	}
	if buy.Status.Code == codes.Error {
		t.Errorf("Buy's status is an error for %s", ans.Code())
	}
	if !servers[buy.Parent.SpanID().String()] {
		t.Errorf("Buy is not a child of the request's server span")
	}
	if _, ok := spans["__typename"]; !ok {
		t.Errorf("an anonymous operation's span is not named by its first field: %v", spans)
	}
}
