package main

import (
	"context"
	"errors"
	"flag"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/metrics"
	"storefront/internal/server"
)

// opsFlags registers serve's operations settings: the periodic stock check
// and the GraphQL endpoint's limits.
func opsFlags(fs *flag.FlagSet, c *config) {
	fs.DurationVar(&c.ReconcileInterval, "reconcile-interval", envDuration("RECONCILE_INTERVAL", 10*time.Minute),
		"how often stock is checked against the ledger (STOREFRONT_RECONCILE_INTERVAL)")
	fs.DurationVar(&c.RequestTimeout, "request-timeout", envDuration("REQUEST_TIMEOUT", server.DefaultRequestTimeout),
		"deadline of one GraphQL request or payment notification (STOREFRONT_REQUEST_TIMEOUT)")
	fs.IntVar(&c.MaxQueryDepth, "max-query-depth", int(envInt("MAX_QUERY_DEPTH", server.DefaultMaxDepth)),
		"deepest GraphQL selection accepted (STOREFRONT_MAX_QUERY_DEPTH)")
	fs.IntVar(&c.MaxComplexity, "max-query-complexity", int(envInt("MAX_QUERY_COMPLEXITY", server.DefaultMaxComplexity)),
		"highest GraphQL query complexity accepted; lists count first × their fields (STOREFRONT_MAX_QUERY_COMPLEXITY)")
}

func validOps(c *config) error {
	switch {
	case c.ReconcileInterval <= 0:
		return errors.New("--reconcile-interval must be positive")
	case c.RequestTimeout <= 0:
		return errors.New("--request-timeout must be positive")
	case c.MaxQueryDepth < 1 || c.MaxComplexity < 1:
		return errors.New("--max-query-depth and --max-query-complexity must be at least 1")
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
