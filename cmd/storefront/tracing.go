package main

import (
	"context"
	"flag"
	"log/slog"
	"time"

	"storefront/internal/platform/tracing"
)

// tracingFlags registers serve's OpenTelemetry settings (docs/operations.md,
// "Tracing"). The exporter also reads the standard OTEL_EXPORTER_OTLP_*
// variables (headers, timeout, TLS) and the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES.
func tracingFlags(fs *flag.FlagSet, c *config) {
	t := &c.Tracing
	*t = tracing.DefaultConfig()
	fs.StringVar(&t.Endpoint, "otel-endpoint", env("OTEL_ENDPOINT", ""),
		"send OpenTelemetry traces over OTLP/HTTP to this collector, e.g. http://127.0.0.1:4318 (default: off, unless OTEL_EXPORTER_OTLP_ENDPOINT is set) (STOREFRONT_OTEL_ENDPOINT)")
	fs.Float64Var(&t.Ratio, "otel-sample-ratio", envFloat("OTEL_SAMPLE_RATIO", t.Ratio),
		"share of new traces kept, 0 to 1; a request with a traceparent follows its sampled flag (STOREFRONT_OTEL_SAMPLE_RATIO)")
	fs.BoolVar(&t.KeepErrors, "otel-keep-errors", envBool("OTEL_KEEP_ERRORS", t.KeepErrors),
		"below ratio 1, also keep every trace whose request ended in an error of the service (STOREFRONT_OTEL_KEEP_ERRORS)")
	fs.DurationVar(&t.KeepSlow, "otel-keep-slow", envDuration("OTEL_KEEP_SLOW", t.KeepSlow),
		"below ratio 1, also keep every request that took this long or longer; 0: no such rule (STOREFRONT_OTEL_KEEP_SLOW)")
}

// openTracing builds the tracer provider (nil when tracing is off) and
// returns its shutdown, which exports what is left.
func openTracing(ctx context.Context, c *config) (*tracing.Tracing, func(), error) {
	if err := c.Tracing.Validate(); err != nil {
		return nil, nil, err
	}
	t, err := tracing.New(ctx, c.Tracing)
	if err != nil || t == nil {
		return nil, func() {}, err
	}
	slog.Info("tracing on", "endpoint", c.Tracing.Endpoint, "sample_ratio", c.Tracing.Ratio,
		"keep_errors", c.Tracing.KeepErrors, "keep_slow", c.Tracing.KeepSlow.String())
	return t, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(sctx); err != nil {
			slog.Warn("exporting the last spans failed", "err", err)
		}
	}, nil
}
