package webhooks

import (
	"context"
	"encoding/json"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/ent"
	"storefront/internal/platform/tracing"
)

// attemptSpan starts the client span of one attempt to send e to h: a
// child of the change that raised e (its traceparent), so the order's
// trace shows every attempt its webhooks got, linked to the sender's pass
// when there is one. The URL is given without its query (it may carry a
// receiver's token).
func (s *Service) attemptSpan(ctx context.Context, h *ent.Webhook, e event, attempt int) (context.Context, trace.Span) {
	full := h.URL
	if u, err := url.Parse(h.URL); err == nil {
		u.RawQuery, u.User, u.Fragment = "", nil, ""
		full = u.String()
	}
	var links []trace.Link
	if pass := trace.SpanContextFromContext(ctx); pass.IsValid() {
		links = append(links, trace.Link{SpanContext: pass})
	}
	return s.cfg.Tracing.Start(tracing.WithTraceparent(ctx, e.trace), "webhook "+e.typ,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(links...),
		trace.WithAttributes(attribute.String("http.request.method", "POST"), attribute.String("url.full", full),
			attribute.Int64("webhook.id", h.ID), attribute.String("webhook.event_id", e.id),
			attribute.Int("webhook.attempt", attempt), attribute.String("cloudevents.event_type", e.typ)))
}

// traceOf is the traceparent extension of a CloudEvent's JSON ("" when it
// has none).
func traceOf(body []byte) string {
	var ce struct {
		Traceparent string `json:"traceparent"`
	}
	_ = json.Unmarshal(body, &ce)
	return ce.Traceparent
}
