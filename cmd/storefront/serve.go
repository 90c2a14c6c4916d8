package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/alecthomas/kong"

	"storefront/internal/app"
	"storefront/internal/platform/gctune"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/store"
)

// serveCmd is `storefront serve`: its flags by area (each area checks its
// own), then Run, the list of what it starts.
type serveCmd struct {
	Server   serverFlags        `embed:"" group:"server"`
	DB       serveDBFlags       `embed:"" group:"database"`
	Checkout serveCheckoutFlags `embed:"" group:"checkout"`
	Catalog  catalogFlags       `embed:"" group:"catalog"`
	GraphQL  graphqlFlags       `embed:"" group:"graphql"`
	Rate     rateFlags          `embed:"" group:"rate"`
	Events   eventsFlags        `embed:"" group:"events"`
	Live     liveFlags          `embed:"" group:"live"`
	OIDC     oidcFlags          `embed:"" group:"auth"`
	Pay      payFlags           `embed:"" group:"payments"`
	Runtime  runtimeFlags       `embed:"" group:"runtime"`
	Tracing  tracingFlags       `embed:"" group:"tracing"`
}

func (c *serveCmd) Run(ctx context.Context, kctx *kong.Context) error {
	signer, err := c.Server.signer()
	if err != nil {
		return err
	}
	// Refused before anything opens: a provider switched on with part of
	// its settings would take payments it cannot verify or refund.
	payCfg, err := c.Pay.config(kctx, c.Server.Demo, c.Checkout.Checkout.Currency)
	if err != nil {
		return err
	}
	// The provider's keys load in the background: an unreachable provider
	// does not stop the start (its tokens answer UNAVAILABLE until then).
	idp, err := c.OIDC.open()
	if err != nil {
		return err
	}
	if idp != nil {
		defer idp.Close()
	}
	tr, stopTracing, err := c.Tracing.open(ctx)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of the final dispatch
	// and of shutdown are exported too.
	defer stopTracing()
	db, wdb, closeDBs, err := c.DB.open(ctx, c.Server.Demo, tr)
	if err != nil {
		return err
	}
	defer closeDBs()
	m := metrics.New()
	store.OnRetry = func(cause string) { m.TxRetries.WithLabelValues(cause).Inc() }
	// Shutdown does not wait for WebSocket connections (hijacked): they
	// close when this ends, as the listener stops.
	closing, closeLive := context.WithCancel(context.Background())
	defer closeLive()
	sf := app.New(db, wdb, signer, c.app(payCfg, m, tr, closing, idp))
	defer sf.Close()
	if c.Server.Demo {
		if err := seedDemo(ctx, sf, signer); err != nil {
			return err
		}
	}
	out, err := openSinks(ctx, &c.Events, sf.Hooks, m, tr)
	if err != nil {
		return err
	}
	defer out.close()
	public, metricsAt, stopMetrics, err := c.Server.handler(sf)
	if err != nil {
		return err
	}
	defer stopMetrics()
	ln, err := net.Listen("tcp", c.Server.Addr)
	if err != nil {
		return err
	}
	srv := httpServer(public)
	srv.RegisterOnShutdown(closeLive)
	fmt.Printf("storefront listening on http://%s (GraphQL at /graphql)\n", ln.Addr())
	gc, gcFrom := gctune.Apply(c.Runtime.GCPercent)
	mem, memFrom := gctune.ApplyMemoryLimit(c.memoryLimit())
	slog.Info("serving", "addr", ln.Addr().String(), "metrics_addr", metricsAt, "db", strings.SplitN(c.DB.Database.DB, ":", 2)[0], "gc_percent", gc, "gc_percent_from", gcFrom,
		"memory_limit", mem, "memory_limit_from", memFrom, "instance_id", c.Server.instance, "response_cache", c.GraphQL.Cache.On, "live_max_conns", sf.HTTP.Live.MaxConns)

	takeBack(ctx, sf.Outbox, out)
	// The closer and the dispatcher outlive the signal until the requests have
	// drained (stopBackground is deferred), so the final dispatch sees their events.
	defer background(context.WithoutCancel(ctx), sf, out, c.Checkout.CloseInterval, c.Events.OutboxInterval, tr)()
	defer sweepRefunds(context.WithoutCancel(ctx), sf.Payments, c.Pay.RefundInterval)()
	defer reconcileEvery(context.WithoutCancel(ctx), sf.Inventory, m, c.Runtime.ReconcileInterval)()
	return serveUntil(ctx, srv, ln, c.Server.ShutdownTimeout)
}
