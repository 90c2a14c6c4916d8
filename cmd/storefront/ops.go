package main

import (
	"context"
	"errors"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/metrics"
)

// runtimeFlags are serve's runtime settings and its periodic stock check.
type runtimeFlags struct {
	ReconcileInterval time.Duration `name:"reconcile-interval" env:"STOREFRONT_RECONCILE_INTERVAL" default:"10m" help:"how often stock is checked against the ledger"`
	GCPercent         int           `name:"gc-percent" env:"STOREFRONT_GC_PERCENT" default:"${gc_percent}" help:"garbage-collection target, as GOGC sets it; GOGC, when set, wins"`
	MemoryLimit       int64         `name:"memory-limit" placeholder:"BYTES" env:"STOREFRONT_MEMORY_LIMIT" help:"the Go runtime's soft memory limit in bytes; 0: the caches' bounds (--cache-max-cost, --response-cache-max-cost, twice --query-cache-bytes) plus 48 MiB; GOMEMLIMIT, when set, wins"`
}

func (r *runtimeFlags) Validate() error {
	switch {
	case r.ReconcileInterval <= 0:
		return errors.New("--reconcile-interval must be positive")
	case r.GCPercent < 0:
		return errors.New("--gc-percent must be 0 or more")
	case r.MemoryLimit < 0:
		return errors.New("--memory-limit must be 0 (derived from the caches) or more")
	}
	return nil
}

// reconcileEvery runs the stock check now and then every interval, until
// the returned func is called. Several instances may all run it: it only
// reads.
func reconcileEvery(ctx context.Context, inv *inventory.Service, m *metrics.Metrics, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(ctx, "stock reconciliation found differences", interval, func(ctx context.Context) (int, error) {
			return stockCheck(ctx, inv, m, 10000)
		})
	}()
	return func() { cancel(); <-done }
}
