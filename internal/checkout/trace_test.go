package checkout

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// A group-commit batch of three requests' orders, traced: one batch span,
// linked to each request's span and a child of the first's; the batch's
// statements are its children, with db.system and no value of the orders
// in their text (the server batches write their values inline); and the
// one outbox row the batch's own statements render gives each OrderPlaced
// event its own request's traceparent, on every backend's renderer.
func TestGroupBatchTraces(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tr, err := tracing.New(context.Background(), tracing.Config{Ratio: 1, Exporter: exp})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
			db := testdb.Open(t, b, store.WithConnectorWrapper(tr.Connector))
			f := setup(t, db)
			f.svc.cfg.Tracing = tr
			id := f.skuID(t, "黑色,L")
			hold(f, id)
			ins := buyers(id, 3)
			orders, errs := make([]*Order, len(ins)), make([]error, len(ins))
			requests := make([]trace.SpanContext, len(ins))
			var wg sync.WaitGroup
			for i, in := range ins {
				ctx, span := tr.Start(bounded(t), "request")
				requests[i] = span.SpanContext()
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer span.End()
					orders[i], errs[i] = f.svc.Place(ctx, in)
				}()
				wait.For(t, "the order is queued", func() bool { return queued(f) >= i+1 })
			}
			unhold(f)
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("order %d: %v", i, err)
				}
			}

			rows, err := db.Client.Outbox.Query().All(context.Background())
			if err != nil || len(rows) != 1 {
				t.Fatalf("outbox rows = %d, %v; want the batch's one", len(rows), err)
			}
			evs, err := outbox.RowEvents(rows[0])
			if err != nil || len(evs) != 3 {
				t.Fatalf("events of the row = %d, %v; want 3", len(evs), err)
			}
			for i, o := range orders {
				want := tracing.TraceparentOf(requests[i])
				for _, e := range evs {
					if e.Aggregate.ID == o.OrderSn && e.Trace != want {
						t.Errorf("order %d's event has trace %q, want its request's %q", i, e.Trace, want)
					}
				}
			}

			if err := tr.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			var batch *tracetest.SpanStub
			spans := exp.GetSpans()
			for i := range spans {
				if spans[i].Name == "checkout.batch" {
					batch = &spans[i]
				}
			}
			if batch == nil {
				t.Fatalf("no checkout.batch span among %d spans", len(spans))
			}
			linked := map[trace.SpanID]bool{}
			for _, l := range batch.Links {
				linked[l.SpanContext.SpanID()] = true
			}
			for i, r := range requests {
				if !linked[r.SpanID()] {
					t.Errorf("the batch does not link request %d", i)
				}
			}
			if batch.Parent.SpanID() != requests[0].SpanID() || batch.SpanContext.TraceID() != requests[0].TraceID() {
				t.Errorf("the batch's parent is %s, want the first request's span %s", batch.Parent.SpanID(), requests[0].SpanID())
			}
			system := map[testdb.Backend]string{testdb.SQLite: "sqlite", testdb.MySQL: "mysql", testdb.Postgres: "postgresql"}[b]
			statements := 0
			for _, s := range spans {
				if s.Parent.SpanID() != batch.SpanContext.SpanID() {
					continue
				}
				statements++
				text := attrOf(s, "db.query.text")
				if attrOf(s, "db.system") != system || text == "" {
					t.Errorf("statement span %q: db.system %q, text %q; want %s and its text", s.Name, attrOf(s, "db.system"), text, system)
				}
				for _, o := range orders {
					if strings.Contains(text, o.OrderSn) || strings.Contains(text, "'"+o.UserID+"'") {
						t.Errorf("statement span %q carries a value of order %s: %s", s.Name, o.OrderSn, text)
					}
				}
			}
			if statements == 0 {
				t.Errorf("the batch has no statement spans")
			}
		})
	}
}

func attrOf(s tracetest.SpanStub, key string) string {
	for _, a := range s.Attributes {
		if string(a.Key) == key {
			return a.Value.Emit()
		}
	}
	return ""
}
