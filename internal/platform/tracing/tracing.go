// Package tracing is the service's OpenTelemetry traces: one tracer
// provider exporting over OTLP/HTTP, built once by the binary and handed to
// every package that makes spans. Off (a nil *Tracing) it costs nothing: no
// provider, no wrapper around the database driver, no middleware, and the
// few calls left on hot paths return at a nil check without allocating.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Config is serve's tracing settings (docs/operations.md, "Tracing").
type Config struct {
	// Endpoint is the OTLP/HTTP receiver's base URL (http://host:4318);
	// traces go to its /v1/traces unless the URL names another path. Empty:
	// the exporter's standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) decide, and tracing is off when
	// neither is set.
	Endpoint string
	// Ratio is the share of new traces kept (0..1), decided at their
	// first span; a trace begun upstream follows its traceparent's flag.
	Ratio float64
	// KeepErrors and KeepSlow keep, whatever Ratio decided, a request that
	// ended in an error or took KeepSlow or longer (0: no such rule): its
	// spans are recorded and held until it ends (tail.go).
	KeepErrors bool
	KeepSlow   time.Duration
	// Service is the service.name of the spans unless OTEL_SERVICE_NAME
	// says otherwise.
	Service string
	// Exporter replaces the OTLP exporter (tests that read spans back in
	// process).
	Exporter sdktrace.SpanExporter
}

// DefaultConfig is tracing off, with the sampling rules it would use.
func DefaultConfig() Config {
	return Config{Ratio: 1, KeepErrors: true, KeepSlow: time.Second, Service: "storefront"}
}

// Enabled reports whether c switches tracing on: an endpoint given, or the
// exporter's standard variables set, and OTEL_SDK_DISABLED not true.
func Enabled(c Config) bool {
	if v, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); v {
		return false
	}
	return c.Exporter != nil || c.Endpoint != "" ||
		os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Validate checks c's values.
func (c Config) Validate() error {
	if c.Ratio < 0 || c.Ratio > 1 {
		return fmt.Errorf("--otel-sample-ratio %v: want 0 to 1", c.Ratio)
	}
	if c.KeepSlow < 0 {
		return errors.New("--otel-keep-slow must be 0 or more")
	}
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--otel-endpoint %q: want an http or https URL such as http://127.0.0.1:4318", c.Endpoint)
		}
	}
	return nil
}

// Tracing is the tracer provider and what the packages need of it. A nil
// *Tracing is tracing off: every method works and does nothing.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	tail     *tail // nil: sampling decided at the first span only
}

// New builds the provider of c, or returns nil when c does not switch
// tracing on (Enabled).
func New(ctx context.Context, c Config) (*Tracing, error) {
	if !Enabled(c) {
		return nil, nil
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	exp := c.Exporter
	if exp == nil {
		var opts []otlptracehttp.Option
		if c.Endpoint != "" {
			opts = append(opts, otlptracehttp.WithEndpointURL(tracesURL(c.Endpoint)))
		}
		var err error
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("OTLP exporter: %w", err)
		}
	}
	if c.Service == "" {
		c.Service = "storefront"
	}
	res, err := resource.New(ctx, resource.WithAttributes(attribute.String("service.name", c.Service)),
		resource.WithFromEnv(), resource.WithHost(), resource.WithProcessPID())
	if err != nil && res == nil {
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	// W3C trace context only: a caller's baggage is nothing this service
	// reads or should hand on to webhook receivers.
	t := &Tracing{prop: propagation.TraceContext{}}
	var proc sdktrace.SpanProcessor = sdktrace.NewBatchSpanProcessor(exp)
	if c.Ratio < 1 && (c.KeepErrors || c.KeepSlow > 0) {
		t.tail = newTail(proc, c.KeepErrors, c.KeepSlow)
		proc = t.tail
	}
	t.provider = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(proc),
		sdktrace.WithSampler(sampler{ratio: sdktrace.TraceIDRatioBased(c.Ratio), record: t.tail != nil}))
	t.tracer = t.provider.Tracer("storefront")
	return t, nil
}

// tracesURL is endpoint with the OTLP/HTTP traces path when it names none,
// as OTEL_EXPORTER_OTLP_ENDPOINT is read.
func tracesURL(endpoint string) string {
	u, err := url.Parse(endpoint)
	if err != nil || strings.Trim(u.Path, "/") != "" {
		return endpoint
	}
	u.Path = "/v1/traces"
	return u.String()
}

// On reports whether tracing is on.
func (t *Tracing) On() bool { return t != nil }

// Shutdown exports what is left and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// ForceFlush exports every ended span now (tests, before reading the backend).
func (t *Tracing) ForceFlush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// noSpan is what Start returns when tracing is off: kept in an interface
// once, so returning it allocates nothing.
var noSpan trace.Span = noop.Span{}

// Start starts a span named name as a child of ctx's. Off, it returns ctx
// itself and a span that does nothing.
func (t *Tracing) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if t == nil {
		return ctx, noSpan
	}
	return t.tracer.Start(ctx, name, opts...)
}

// Propagator is the W3C trace context propagator; nil off.
func (t *Tracing) Propagator() propagation.TextMapPropagator {
	if t == nil {
		return nil
	}
	return t.prop
}

// End ends span, recording err (when not nil) as its error and status:
// one call for the deferred end of every span that can fail.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// Traceparent is the W3C traceparent header of ctx's span ("" when ctx has
// none): what the outbox keeps with an event so that its publish and
// webhook attempts join the trace of the change.
func Traceparent(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return TraceparentOf(sc)
}

// TraceparentOf is sc as a W3C traceparent ("" when sc is not valid).
func TraceparentOf(sc trace.SpanContext) string {
	if !sc.IsValid() {
		return ""
	}
	tid, sid := sc.TraceID(), sc.SpanID()
	return "00-" + tid.String() + "-" + sid.String() + "-" + sc.TraceFlags().String()
}

// WithTraceparent is ctx with the remote span context of tp (a W3C
// traceparent) as the parent of the spans started from it; ctx itself when
// tp is empty or malformed.
func WithTraceparent(ctx context.Context, tp string) context.Context {
	if tp == "" {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": tp})
}

// SpanContextOf is the span context a traceparent names (invalid when
// empty or malformed): a link's target.
func SpanContextOf(tp string) trace.SpanContext {
	return trace.SpanContextFromContext(WithTraceparent(context.Background(), tp))
}
