package payments

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"storefront/internal/platform/tracing"
)

// stubProvider answers the calls the test makes; a provider is no
// database or broker, and what is tested is the wrapper around it.
type stubProvider struct{ Provider }

func (stubProvider) Name() string { return "stub" }
func (stubProvider) Refund(context.Context, RefundRequest) (RefundResult, error) {
	return RefundResult{}, errors.New("provider refused")
}

type stubCanceler struct{ stubProvider }

func (stubCanceler) Cancel(context.Context, StartedPayment) error { return nil }

// With tracing on, every provider call is a client span with its order and,
// for a refund, its number; a failed call's span is an error; a provider
// that cancels payments still does through the wrapper.
func TestProviderCallsAreSpans(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tr, err := tracing.New(context.Background(), tracing.Config{Ratio: 1, Exporter: exp})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Shutdown(context.Background())
	ps := tracedProviders(tr, map[string]Provider{"stub": stubProvider{}, "cancels": stubCanceler{}})
	if _, ok := ps["cancels"].(Canceler); !ok {
		t.Fatal("the wrapper hid the provider's Cancel")
	}
	if _, ok := ps["stub"].(Canceler); ok {
		t.Fatal("the wrapper gave Cancel to a provider without one")
	}
	if _, err := ps["stub"].Refund(context.Background(), RefundRequest{RefundNo: "R1", OrderSn: "S1"}); err == nil {
		t.Fatal("the wrapper lost the provider's error")
	}
	if err := ps["cancels"].(Canceler).Cancel(context.Background(), StartedPayment{OrderSn: "S2"}); err != nil {
		t.Fatal(err)
	}
	if err := tr.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]tracetest.SpanStub{}
	for _, s := range exp.GetSpans() {
		got[s.Name] = s
	}
	refund, ok := got["payment.refund stub"]
	if !ok || refund.Status.Code != codes.Error {
		t.Fatalf("refund span %+v (found %v), want an error span", refund.Status, ok)
	}
	want := map[string]string{"order.sn": "S1", "payment.refund_no": "R1", "payment.provider": "stub"}
	for _, kv := range refund.Attributes {
		if w, ok := want[string(kv.Key)]; ok && kv.Value.Emit() == w {
			delete(want, string(kv.Key))
		}
	}
	if len(want) > 0 {
		t.Errorf("the refund span lacks %v", want)
	}
	if _, ok := got["payment.cancel stub"]; !ok {
		t.Errorf("no cancel span among %v", got)
	}
}
