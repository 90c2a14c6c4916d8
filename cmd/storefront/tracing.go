package main

import (
	"context"
	"log/slog"
	"time"

	"storefront/internal/platform/tracing"
)

// tracingFlags are serve's OpenTelemetry settings (docs/operations.md,
// "Tracing"). The exporter also reads the standard OTEL_EXPORTER_OTLP_*
// variables (headers, timeout, TLS) and the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES.
type tracingFlags struct {
	Endpoint   string        `name:"otel-endpoint" env:"STOREFRONT_OTEL_ENDPOINT" help:"send OpenTelemetry traces over OTLP/HTTP to this collector, e.g. http://127.0.0.1:4318 (default: off, unless OTEL_EXPORTER_OTLP_ENDPOINT is set)"`
	Ratio      float64       `name:"otel-sample-ratio" env:"STOREFRONT_OTEL_SAMPLE_RATIO" default:"${otel_sample_ratio}" help:"share of new traces kept, 0 to 1; a request with a traceparent follows its sampled flag"`
	KeepErrors bool          `name:"otel-keep-errors" env:"STOREFRONT_OTEL_KEEP_ERRORS" default:"${otel_keep_errors}" help:"below ratio 1, also keep every trace whose request ended in an error of the service"`
	KeepSlow   time.Duration `name:"otel-keep-slow" env:"STOREFRONT_OTEL_KEEP_SLOW" default:"${otel_keep_slow}" help:"below ratio 1, also keep every request that took this long or longer; 0: no such rule"`
}

func (t *tracingFlags) config() tracing.Config {
	c := tracing.DefaultConfig()
	c.Endpoint, c.Ratio, c.KeepErrors, c.KeepSlow = t.Endpoint, t.Ratio, t.KeepErrors, t.KeepSlow
	return c
}

func (t *tracingFlags) Validate() error { return t.config().Validate() }

// open builds the tracer provider (nil when tracing is off) and returns
// its shutdown, which exports what is left.
func (t *tracingFlags) open(ctx context.Context) (*tracing.Tracing, func(), error) {
	c := t.config()
	tr, err := tracing.New(ctx, c)
	if err != nil || tr == nil {
		return nil, func() {}, err
	}
	slog.Info("tracing on", "endpoint", c.Endpoint, "sample_ratio", c.Ratio, "keep_errors", c.KeepErrors, "keep_slow", c.KeepSlow.String())
	return tr, func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tr.Shutdown(sctx); err != nil {
			slog.Warn("exporting the last spans failed", "err", err)
		}
	}, nil
}
