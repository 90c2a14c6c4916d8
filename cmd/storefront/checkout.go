package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alecthomas/kong"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"

	"storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/cart"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/tracing"
)

// checkoutFlags are the order and cart settings serve and close-expired
// share.
type checkoutFlags struct {
	OrderTTL      time.Duration `name:"order-ttl" env:"STOREFRONT_ORDER_TTL" default:"${order_ttl}" help:"unpaid orders older than this are closed"`
	MaxQuantity   int64         `name:"max-quantity" env:"STOREFRONT_MAX_QUANTITY" default:"${max_quantity}" help:"most units of one SKU per order"`
	Currency      string        `name:"currency" env:"STOREFRONT_CURRENCY" default:"${currency}" help:"ISO 4217 currency of orders"`
	CloseBatch    int           `name:"close-batch" env:"STOREFRONT_CLOSE_BATCH" default:"${close_batch}" help:"order ids the timeout closer reads per query; it closes them 32 per transaction"`
	GroupCommit   bool          `name:"group-commit" env:"STOREFRONT_GROUP_COMMIT" default:"${group_commit}" help:"batch single-SKU orders that arrive while others are in flight into one transaction"`
	GroupMax      int           `name:"group-max" env:"STOREFRONT_GROUP_MAX" default:"${group_max}" help:"most orders one group-commit transaction takes"`
	GroupInFlight int           `name:"group-inflight" env:"STOREFRONT_GROUP_INFLIGHT" default:"${group_inflight}" help:"most group-commit transactions in flight at once"`
	PoolBatchMax  int           `name:"pool-batch-max" env:"STOREFRONT_POOL_BATCH_MAX" default:"${pool_batch_max}" help:"most orders one group-commit transaction of a stock pool takes"`
	AutoConfirm   time.Duration `name:"auto-confirm-after" env:"STOREFRONT_AUTO_CONFIRM_AFTER" default:"${auto_confirm_after}" help:"the closer completes SHIPPED orders whose receipt was not confirmed this long after they shipped"`
	CartTTL       time.Duration `name:"cart-ttl" env:"STOREFRONT_CART_TTL" default:"${cart_ttl}" help:"carts untouched for this long expire and are purged"`
}

// Validate refuses settings that would break checkout silently.
func (c *checkoutFlags) Validate() error {
	switch {
	case c.OrderTTL <= 0:
		return errors.New("--order-ttl must be positive")
	case c.MaxQuantity < 1:
		return errors.New("--max-quantity must be at least 1")
	case len(c.Currency) != 3:
		return fmt.Errorf("--currency %q: want a 3-letter ISO 4217 code", c.Currency)
	case c.CloseBatch < 1:
		return errors.New("--close-batch must be at least 1")
	case c.GroupMax < 1:
		return errors.New("--group-max must be at least 1")
	case c.GroupInFlight < 1:
		return errors.New("--group-inflight must be at least 1")
	case c.PoolBatchMax < 1:
		return errors.New("--pool-batch-max must be at least 1")
	case c.AutoConfirm <= 0:
		return errors.New("--auto-confirm-after must be positive")
	case c.CartTTL <= 0:
		return errors.New("--cart-ttl must be positive")
	}
	return nil
}

// config is checkout's configuration: its defaults with the flags'.
func (c *checkoutFlags) config() checkout.Config {
	cfg := checkout.DefaultConfig()
	cfg.OrderTTL, cfg.MaxQuantity, cfg.Currency, cfg.CloseBatch = c.OrderTTL, c.MaxQuantity, c.Currency, c.CloseBatch
	cfg.GroupCommit, cfg.GroupMax, cfg.GroupInFlight, cfg.PoolBatchMax, cfg.AutoConfirm = c.GroupCommit, c.GroupMax, c.GroupInFlight, c.PoolBatchMax, c.AutoConfirm
	return cfg
}

// serveCheckoutFlags are checkout's settings in serve: the shared ones,
// the after-sales' window and how often the closer runs.
type serveCheckoutFlags struct {
	Checkout        checkoutFlags `embed:""`
	AfterSaleWindow time.Duration `name:"after-sale-window" env:"STOREFRONT_AFTER_SALE_WINDOW" default:"${after_sale_window}" help:"buyers may ask for a refund or return this long after an order completes"`
	CloseInterval   time.Duration `name:"close-interval" env:"STOREFRONT_CLOSE_INTERVAL" default:"30s" help:"how often the timeout closer runs"`
}

func (c *serveCheckoutFlags) Validate() error {
	if c.CloseInterval <= 0 {
		return errors.New("--close-interval must be positive")
	}
	return nil
}

// closeExpiredCmd is `storefront close-expired`: one pass of the timeout
// closer (for cron, or to drain a backlog by hand).
type closeExpiredCmd struct {
	Database dbFlags       `embed:"" group:"database"`
	Checkout checkoutFlags `embed:"" group:"checkout"`
	Pay      payFlags      `embed:"" group:"payments"`
}

func (c *closeExpiredCmd) Run(ctx context.Context, kctx *kong.Context) error {
	// The providers serve talks to: an order with a started payment is
	// closed only after its provider says it was not paid.
	payCfg, err := c.Pay.config(kctx, false, c.Checkout.Currency)
	if err != nil {
		return err
	}
	db, err := c.Database.open(ctx, c.Database.DB, c.Database.sqlite(), nil) // as serve: the embedded file is always brought up to date
	if err != nil {
		return err
	}
	defer db.Close()
	orders, _, _ := app.Orders(db, c.Checkout.config(), payCfg, aftersale.DefaultConfig())
	n, err := orders.CloseExpired(ctx)
	if err != nil {
		return fmt.Errorf("closed %d expired orders, then: %w", n, err)
	}
	fmt.Printf("closed %d expired orders\n", n)
	done, err := orders.CompleteShipped(ctx)
	if err != nil {
		return fmt.Errorf("completed %d shipped orders, then: %w", done, err)
	}
	fmt.Printf("completed %d shipped orders (--auto-confirm-after %s)\n", done, c.Checkout.AutoConfirm)
	pools, err := inventory.New(db).ReturnEnded(ctx, time.Now())
	if err != nil {
		return fmt.Errorf("returned %d ended stock pools, then: %w", pools, err)
	}
	fmt.Printf("returned %d ended stock pools\n", pools)
	gone, err := cart.New(db, orders, cart.Config{TTL: c.Checkout.CartTTL}).Purge(ctx)
	if err != nil {
		return fmt.Errorf("purged %d expired carts, then: %w", gone, err)
	}
	fmt.Printf("purged %d expired carts\n", gone)
	return nil
}

// every runs f now and then every interval until ctx ends. A failing pass is
// logged and retried at the next tick: the closer and the dispatcher must
// survive a database blip.
func every(ctx context.Context, name string, interval time.Duration, f func(context.Context) (int, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := f(ctx); err != nil && ctx.Err() == nil {
			slog.Warn(name+" failed", "err", err)
		} else if n > 0 {
			slog.Info(name, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// background starts the timeout closer and the outbox dispatcher; the
// returned func stops them and waits.
func background(ctx context.Context, sf *app.App, out *sinks, closeEvery, outboxEvery time.Duration, tr *tracing.Tracing) (stop func()) {
	svc, dispatcher, inv, carts, m := sf.Checkout, sf.Outbox, sf.Inventory, sf.Carts, sf.Metrics
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{}, 4)
	go func() {
		defer func() { done <- struct{}{} }()
		every(ctx, "closed expired orders", closeEvery, func(ctx context.Context) (n int, err error) {
			// A pass's statements are its span's children (tracing on).
			ctx, span := tr.Start(ctx, "closer.pass")
			defer func() {
				span.SetAttributes(attribute.Int("closer.closed", n))
				tracing.End(span, err)
			}()
			n, err = svc.CloseExpired(ctx)
			m.OrdersClosed.WithLabelValues("timeout").Add(float64(n))
			if err == nil {
				_, err = svc.PurgeKeys(ctx)
			}
			// Shipped orders whose buyer did not confirm receipt within
			// --auto-confirm-after complete (each once, whichever closer).
			if err == nil {
				var done int
				if done, err = svc.CompleteShipped(ctx); done > 0 {
					slog.Info("completed shipped orders", "count", done)
				}
			}
			// Pools past their end give their remainder back to main stock
			// (once, whichever instance's closer gets there first).
			if err == nil {
				var pools int
				if pools, err = inv.ReturnEnded(ctx, time.Now()); pools > 0 {
					slog.Info("returned ended stock pools", "count", pools)
				}
			}
			// Carts untouched for --cart-ttl go, in batches.
			if err == nil {
				var gone int
				if gone, err = carts.Purge(ctx); gone > 0 {
					slog.Info("purged expired carts", "count", gone)
				}
			}
			return n, err
		})
	}()
	// The backlog gauges on a loop of their own: a dispatch pass waits for
	// NATS's acks (up to its timeout) while the broker is down, which is
	// just when the gauges matter.
	go func() {
		defer func() { done <- struct{}{} }()
		every(ctx, "", max(outboxEvery, time.Second), func(ctx context.Context) (int, error) {
			backlog(ctx, dispatcher, m)
			return 0, nil
		})
	}()
	// Webhook deliveries: their own loop, so a slow endpoint holds
	// nothing else; it stops after the webhooks' lane's final pass below.
	hctx, stopHooks := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer func() { done <- struct{}{} }()
		out.hooks.Run(hctx)
	}()
	// Each lane of the outbox on a loop of its own, backing off on its own
	// while its sink fails: a broker that is down, full or without its
	// stream holds up neither the webhooks nor anything else.
	lanesDone := make(chan struct{}, len(outbox.Lanes))
	for _, lane := range outbox.Lanes {
		go func() {
			defer func() { lanesDone <- struct{}{} }()
			sink, name := out.lanes[lane], lane.String()
			errs := m.Events.DispatchErrors.WithLabelValues(name)
			dispatcher.RunLane(ctx, lane, sink, outbox.LaneConfig{Interval: outboxEvery, Batch: 500, OnPass: func(n int, err error) {
				if err != nil {
					errs.Inc()
					slog.Warn("dispatching events failed", "lane", name, "err", err)
				} else if n > 0 {
					slog.Info("dispatched events", "lane", name, "count", n)
				}
			}})
			// One last pass on shutdown, so events committed by the drained
			// requests do not wait for the next instance to start.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, err := dispatcher.DrainLane(fctx, lane, sink, 500); err != nil {
				slog.Warn("final event dispatch failed", "lane", name, "err", err)
			}
		}()
	}
	go func() {
		defer func() { done <- struct{}{} }()
		for range outbox.Lanes {
			<-lanesDone
		}
		stopHooks()
	}()
	return func() { cancel(); <-done; <-done; <-done; <-done }
}

// backlog sets the outbox gauges of /metrics: what waits for any lane, and
// for each.
func backlog(ctx context.Context, dispatcher *outbox.Dispatcher, m *metrics.Metrics) {
	set := func(pending, age prometheus.Gauge, n int, oldest time.Time) {
		pending.Set(float64(n))
		if n == 0 {
			age.Set(0)
		} else {
			age.Set(time.Since(oldest).Seconds())
		}
	}
	if n, oldest, err := dispatcher.Backlog(ctx); err == nil { // else the next pass tries again
		set(m.Events.Pending, m.Events.OldestAge, n, oldest)
	}
	for _, lane := range outbox.Lanes {
		if n, oldest, err := dispatcher.LaneBacklog(ctx, lane); err == nil {
			set(m.Events.LanePending.WithLabelValues(lane.String()), m.Events.LaneOldestAge.WithLabelValues(lane.String()), n, oldest)
		}
	}
}
