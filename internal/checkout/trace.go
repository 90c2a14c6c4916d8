package checkout

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/internal/platform/tracing"
)

// batchSpan starts a group-commit batch's span: one batch serves many
// requests, so it is linked to each order's request span, and is a child
// of the first sampled one's (of the first's when none is) so that a trace
// of one order shows the batch that placed it. Its SQL statements are its
// children. Off, ctx itself and a span that does nothing.
func (s *Service) batchSpan(ctx context.Context, batch []*ticket) (context.Context, trace.Span) {
	t := s.cfg.Tracing
	if !t.On() {
		return t.Start(ctx, "")
	}
	var parent trace.SpanContext
	links := make([]trace.Link, 0, len(batch))
	for _, k := range batch {
		if !k.span.IsValid() {
			continue
		}
		links = append(links, trace.Link{SpanContext: k.span})
		if !parent.IsValid() || (!parent.IsSampled() && k.span.IsSampled()) {
			parent = k.span
		}
	}
	if parent.IsValid() {
		// Remote: the request's span may have ended by now, and the
		// sampler treats the batch as a root of its own when the request
		// was not sampled (tail.go).
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	}
	return t.Start(ctx, "checkout.batch", trace.WithLinks(links...), trace.WithAttributes(
		attribute.Int("checkout.batch.orders", len(batch)), attribute.Int64("checkout.batch.sku", batch[0].item),
		attribute.Int64("checkout.batch.pool", batch[0].pool)))
}

// traceparents is each won order's request trace (the OrderPlaced event
// keeps it), nil with tracing off.
func traceparents(batch []*ticket, won []int) []string {
	var out []string
	for j, i := range won {
		if sc := batch[i].span; sc.IsValid() {
			if out == nil {
				out = make([]string, len(won))
			}
			out[j] = tracing.TraceparentOf(sc)
		}
	}
	return out
}
