package payments

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/internal/platform/tracing"
)

// tracedProviders is providers with a client span around every call that
// reaches a provider (start, query, refund, cancel), so a trace shows the
// time an order or a refund spent at WeChat Pay, Alipay or Stripe.
func tracedProviders(t *tracing.Tracing, providers map[string]Provider) map[string]Provider {
	out := make(map[string]Provider, len(providers))
	for name, p := range providers {
		tp := traced{Provider: p, t: t}
		if c, ok := p.(Canceler); ok {
			out[name] = tracedCanceler{tp, c}
		} else {
			out[name] = tp
		}
	}
	return out
}

type traced struct {
	Provider
	t *tracing.Tracing
}

func (p traced) span(ctx context.Context, op, orderSn string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return p.t.Start(ctx, "payment."+op+" "+p.Name(), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, attribute.String("payment.provider", p.Name()), attribute.String("order.sn", orderSn))...))
}

func (p traced) Start(ctx context.Context, o StartOrder) (_ Started, err error) {
	ctx, span := p.span(ctx, "start", o.OrderSn)
	defer func() { tracing.End(span, err) }()
	return p.Provider.Start(ctx, o)
}

func (p traced) Query(ctx context.Context, s StartedPayment) (_ Queried, err error) {
	ctx, span := p.span(ctx, "query", s.OrderSn)
	defer func() { tracing.End(span, err) }()
	return p.Provider.Query(ctx, s)
}

func (p traced) Refund(ctx context.Context, r RefundRequest) (_ RefundResult, err error) {
	ctx, span := p.span(ctx, "refund", r.OrderSn, attribute.String("payment.refund_no", r.RefundNo), attribute.String("payment.refund_amount", r.Amount.String()))
	defer func() { tracing.End(span, err) }()
	return p.Provider.Refund(ctx, r)
}

type tracedCanceler struct {
	traced
	c Canceler
}

func (p tracedCanceler) Cancel(ctx context.Context, s StartedPayment) (err error) {
	ctx, span := p.span(ctx, "cancel", s.OrderSn)
	defer func() { tracing.End(span, err) }()
	return p.c.Cancel(ctx, s)
}
