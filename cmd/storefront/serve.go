package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"storefront/internal/aftersale"
	"strings"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/gctune"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/store"
)

func serve(ctx context.Context, args []string) error {
	var c config
	fs := flagSet("serve", &c)
	fs.StringVar(&c.Addr, "addr", env("ADDR", "127.0.0.1:8080"), "listen address (STOREFRONT_ADDR)")
	fs.BoolVar(&c.Demo, "demo", envBool("DEMO", false), "migrate, seed the demo catalog, print demo tokens (STOREFRONT_DEMO)")
	instanceFlag(fs, &c)
	fs.StringVar(&c.DBWriter, "db-writer", env("DB_WRITER", ""), "where checkout, payments and stock changes write: the nodes of a Galera cluster, mysql:DSN1,DSN2,… in the same order on every instance; the first ready node takes the writes (default: --db) (STOREFRONT_DB_WRITER)")
	fs.BoolVar(&c.Migrate, "migrate", envBool("MIGRATE", false), "apply the schema on start (default on for SQLite) (STOREFRONT_MIGRATE)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", env("METRICS_ADDR", ""), "serve /metrics on this address only (default: on --addr) (STOREFRONT_METRICS_ADDR)")
	fs.BoolVar(&c.Introspection, "introspection", envBool("INTROSPECTION", false), "allow GraphQL introspection and the playground (default on with --demo) (STOREFRONT_INTROSPECTION)")
	checkoutFlags(fs, &c.Checkout)
	c.AfterSale = aftersale.DefaultConfig()
	fs.DurationVar(&c.AfterSale.Window, "after-sale-window", envDuration("AFTER_SALE_WINDOW", c.AfterSale.Window), "buyers may ask for a refund or return this long after an order completes (STOREFRONT_AFTER_SALE_WINDOW)")
	c.Catalog = catalog.DefaultConfig()
	fs.DurationVar(&c.Catalog.StockTTL, "stock-ttl", envDuration("STOCK_TTL", catalog.DefaultStockTTL), "how long product pages may show cached stock (STOREFRONT_STOCK_TTL)")
	fs.Int64Var(&c.Catalog.CacheMaxCost, "cache-max-cost", envInt("CACHE_MAX_COST", catalog.DefaultCacheMaxCost), "product-view cache memory bound in bytes (STOREFRONT_CACHE_MAX_COST)")
	fs.DurationVar(&c.CloseInterval, "close-interval", envDuration("CLOSE_INTERVAL", 30*time.Second), "how often the timeout closer runs (STOREFRONT_CLOSE_INTERVAL)")
	cartFlags(fs, &c)
	fs.DurationVar(&c.OutboxInterval, "outbox-interval", envDuration("OUTBOX_INTERVAL", time.Second), "how often committed events are dispatched (STOREFRONT_OUTBOX_INTERVAL)")
	eventsFlags(fs, &c.Events)
	opsFlags(fs, &c)
	limitFlags(fs, &c)
	responseCacheFlags(fs, &c)
	rateLimitFlags(fs, &c)
	memoryLimitFlag(fs, &c)
	liveFlags(fs, &c)
	oidcFlags(fs, &c)
	paymentFlags(fs, &c.Pay)
	tracingFlags(fs, &c)
	fs.IntVar(&c.GCPercent, "gc-percent", int(envInt("GC_PERCENT", gctune.DefaultPercent)), "garbage-collection target, as GOGC sets it; GOGC, when set, wins (STOREFRONT_GC_PERCENT)")
	fs.TextVar(logLevel, "log-level", logLevel, "least level logged: debug (with it, every event the log sink gets), info, warn or error (STOREFRONT_LOG_LEVEL)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", 15*time.Second), "how long in-flight requests may drain on SIGTERM (STOREFRONT_SHUTDOWN_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := validCheckout(c.Checkout); err != nil {
		return err
	}
	if c.CloseInterval <= 0 || c.OutboxInterval <= 0 {
		return errors.New("--close-interval and --outbox-interval must be positive")
	}
	if err := validCart(&c); err != nil {
		return err
	}
	if err := validEvents(&c.Events); err != nil {
		return err
	}
	if err := validOps(&c); err != nil {
		return err
	}
	if err := validLimits(&c); err != nil {
		return err
	}
	if err := validResponseCache(&c); err != nil {
		return err
	}
	if err := validRateLimits(&c); err != nil {
		return err
	}
	if err := validLive(&c); err != nil {
		return err
	}
	if err := validOIDC(&c); err != nil {
		return err
	}
	if c.GCPercent < 0 {
		return errors.New("--gc-percent must be 0 or more")
	}
	memLimit, err := memoryLimit(&c)
	if err != nil {
		return err
	}
	instance, err := instanceID(&c)
	if err != nil {
		return err
	}
	if !isSet(fs, "migrate") {
		c.Migrate = c.Demo || strings.HasPrefix(c.DB, "sqlite:")
	}
	if !isSet(fs, "introspection") {
		c.Introspection = c.Demo
	}
	if c.JWTSecret == "" {
		if !c.Demo {
			return errors.New("STOREFRONT_JWT_SECRET is not set (use --demo to generate one for this process)")
		}
		c.JWTSecret = randomSecret()
	}
	signer, err := auth.NewSigner(c.JWTSecret)
	if err != nil {
		return err
	}
	// The provider's keys load in the background: an unreachable provider
	// does not stop the start (its tokens answer UNAVAILABLE until then).
	idp, err := openOIDC(&c)
	if err != nil {
		return err
	}
	if idp != nil {
		defer idp.Close()
	}

	// Refused before anything opens: a provider switched on with part of
	// its settings would take payments it cannot verify or refund.
	payCfg, err := paymentConfig(fs, &c.Pay, c.Demo, c.Checkout.Currency)
	if err != nil {
		return err
	}
	tr, stopTracing, err := openTracing(ctx, &c)
	if err != nil {
		return err
	}
	// Deferred first, so it runs last: the spans of the final dispatch
	// and of shutdown are exported too.
	defer stopTracing()
	c.tracer = tr
	db, err := openDB(ctx, &c)
	if err != nil {
		return err
	}
	defer db.Close()

	// On a Galera cluster the hot rows' writes go through one node
	// (internal/platform/store/nodes_mysql.go says why); reads stay on --db, this instance's
	// own node.
	wdb := db
	if c.DBWriter != "" {
		if wdb, err = store.Open(ctx, c.DBWriter, c.pools(), c.traced()); err != nil {
			return fmt.Errorf("--db-writer: %w", err)
		}
		defer wdb.Close()
	}
	m := metrics.New()
	store.OnRetry = func(cause string) { m.TxRetries.WithLabelValues(cause).Inc() }
	// Shutdown does not wait for WebSocket connections (hijacked): they
	// close when this ends, as the listener stops.
	closing, closeLive := context.WithCancel(context.Background())
	defer closeLive()
	sf := app.New(db, wdb, signer, c.app(payCfg, m, instance, closing, memLimit, idp))
	defer sf.Close()
	if c.Demo {
		ids, err := demo.Seed(ctx, sf.Catalog)
		if err != nil {
			return err
		}
		printDemo(ids)
		if err := seedShipping(ctx, sf.Catalog, sf.Ship); err != nil {
			return err
		}
		// The demo customer's token is rendered into /shop/, so the page is signed in.
		if sf.HTTP.DemoToken, err = printDemoTokens(signer); err != nil {
			return err
		}
	}
	out, err := openSinks(ctx, &c.Events, sf.Hooks, m, c.tracer)
	if err != nil {
		return err
	}
	defer out.close()
	var public http.Handler
	metricsAt := "with --addr"
	if c.MetricsAddr == "" {
		public = sf.Handler()
	} else {
		// /metrics only where the monitoring network reaches; the public
		// listener answers 404 there.
		h := sf.Handlers()
		public = h.Public
		mln, err := net.Listen("tcp", c.MetricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("GET /metrics", h.Metrics)
		metricsSrv := httpServer(mux)
		metricsAt = mln.Addr().String()
		go func() {
			if err := metricsSrv.Serve(mln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Error("metrics listener failed", "err", err)
			}
		}()
		// Scrapes need no draining: the listener just closes.
		defer metricsSrv.Close()
	}
	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	srv := httpServer(public)
	srv.RegisterOnShutdown(closeLive)
	fmt.Printf("storefront listening on http://%s (GraphQL at /graphql)\n", ln.Addr())
	gc, gcFrom := gctune.Apply(c.GCPercent)
	mem, memFrom := gctune.ApplyMemoryLimit(memLimit)
	slog.Info("serving", "addr", ln.Addr().String(), "metrics_addr", metricsAt, "db", strings.SplitN(c.DB, ":", 2)[0], "gc_percent", gc, "gc_percent_from", gcFrom,
		"memory_limit", mem, "memory_limit_from", memFrom, "instance_id", instance, "response_cache", c.ResponseCache, "live_max_conns", sf.HTTP.Live.MaxConns)

	takeBack(ctx, sf.Outbox, out)
	// The closer and the dispatcher outlive the signal until the requests have
	// drained (stopBackground is deferred), so the final dispatch sees their events.
	stopBackground := background(context.WithoutCancel(ctx), sf.Checkout, sf.Outbox, sf.Inventory, sf.Carts, out, &c, m)
	defer stopBackground()
	stopRefunds := sweepRefunds(context.WithoutCancel(ctx), sf.Payments, c.Pay.RefundInterval)
	defer stopRefunds()
	stopReconcile := reconcileEvery(context.WithoutCancel(ctx), sf.Inventory, m, c.ReconcileInterval)
	defer stopReconcile()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), c.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// httpServer has the explicit timeouts every listener of serve gets.
func httpServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
	}
}

func randomSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// printDemoTokens prints both demo tokens and returns the customer's.
func printDemoTokens(s *auth.Signer) (string, error) {
	admin, err := s.Issue("demo-admin", auth.Admin, 24*time.Hour)
	if err != nil {
		return "", err
	}
	customer, err := s.Issue(demo.Customer, auth.Customer, 24*time.Hour)
	if err != nil {
		return "", err
	}
	fmt.Printf("demo admin token:    %s\ndemo customer token: %s\n", admin, customer)
	return customer, nil
}
