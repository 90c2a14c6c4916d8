// Package app is the composition root: the one place that builds the
// services, the resolvers and the HTTP handler from one Config. The binary,
// the end-to-end tests and the benchmarks all build through New.
package app

import (
	"net/http"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"storefront/internal/aftersale"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/live"
	"storefront/internal/payments"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/promo"
	"storefront/internal/server"
	"storefront/internal/shipping"
	"storefront/internal/webhooks"
	"storefront/resolvers"
)

// Config is everything New needs besides the open databases and the signer.
type Config struct {
	Catalog  catalog.Config
	Checkout checkout.Config
	Payments payments.Config
	Cart     cart.Config
	// AfterSale holds --after-sale-window.
	AfterSale aftersale.Config
	Live      live.Config
	// Webhooks offer the domains' event types: checkout's when
	// Webhooks.EventTypes is empty.
	Webhooks webhooks.Config
	Outbox   outbox.Config
	// HTTP holds the endpoint's limits and switches. New sets its DB,
	// Resolver, Signer, Metrics, PaymentNotify and ResponseCache.
	HTTP server.Options
	// ResponseCacheMaxCost > 0 serves anonymous cacheable queries from a
	// response cache of that many bytes.
	ResponseCacheMaxCost int64
	// Metrics receives every counter (nil: New makes its own).
	Metrics *metrics.Metrics
	// Tracing is the one tracer provider (nil: tracing off), handed to
	// every service that makes spans. The databases' statements get
	// theirs where the database is opened (store.WithConnectorWrapper
	// with Tracing.Connector).
	Tracing *tracing.Tracing
}

// DefaultConfig has every package's defaults.
func DefaultConfig() Config {
	return Config{Catalog: catalog.DefaultConfig(), Checkout: checkout.DefaultConfig(), Payments: payments.DefaultConfig(),
		AfterSale: aftersale.DefaultConfig()}
}

// App is the built service. Its services are the resolvers' (embedded):
// a.Checkout is the one the GraphQL layer calls.
type App struct {
	// DB serves reads, carts and the catalog; Writer takes checkout,
	// payments and stock (a Galera cluster's writer node, or DB).
	DB, Writer *store.DB
	Metrics    *metrics.Metrics
	// Outbox dispatches every domain's events to the broker's and the
	// webhooks' lanes (serve runs it).
	Outbox *outbox.Dispatcher
	*resolvers.Resolver
	// HTTP is the server's options as New completed them.
	HTTP server.Options
}

// New builds every service on db and writer (writer nil: db).
func New(db, writer *store.DB, signer *auth.Signer, cfg Config) *App {
	if writer == nil {
		writer = db
	}
	m := cfg.Metrics
	if m == nil {
		m = metrics.New()
	}
	if cfg.Checkout.OnReplay == nil {
		cfg.Checkout.OnReplay = m.Replays.Inc
	}
	t := cfg.Tracing
	cfg.Checkout.Tracing, cfg.Payments.Tracing, cfg.Webhooks.Tracing, cfg.Outbox.Tracing, cfg.HTTP.Tracing = t, t, t, t, t
	if len(cfg.Webhooks.EventTypes) == 0 {
		cfg.Webhooks.EventTypes = append(slices.Clone(checkout.EventTypes), aftersale.EventTypes...)
	}
	if cfg.Catalog.OnPurchaseLimit == nil {
		cfg.Catalog.OnPurchaseLimit = checkout.CountHeld
	}
	cat := catalog.New(db, cfg.Catalog)
	orders, pay, afterSales := Orders(writer, cfg.Checkout, cfg.Payments, cfg.AfterSale)
	r := &resolvers.Resolver{Catalog: cat, Inventory: inventory.New(writer), Checkout: orders,
		Payments: pay, Carts: cart.New(db, orders, cfg.Cart),
		Live: live.New(db, cat, cfg.Live), Hooks: webhooks.New(db, cfg.Webhooks), Promo: promo.New(writer), Ship: shipping.New(writer),
		AfterSales: afterSales}
	a := &App{DB: db, Writer: writer, Metrics: m, Resolver: r, Outbox: outbox.New(writer, cfg.Outbox)}

	o := cfg.HTTP
	o.DB, o.Signer, o.Metrics, o.Resolver = db, signer, m, r
	o.PaymentNotify, o.PaymentRoutes = server.NotifyHandler(a.Payments, cfg.Payments.MaxBody), cfg.Payments.Routes()
	o.Collectors = append(append([]prometheus.Collector(nil), o.Collectors...), live.Collector(a.Live))
	if cfg.ResponseCacheMaxCost > 0 {
		o.ResponseCache = server.NewResponseCache(a.Catalog, cfg.ResponseCacheMaxCost)
	}
	a.HTTP = o
	return a
}

// Handler is the whole HTTP surface, /metrics included.
func (a *App) Handler() http.Handler { return server.New(a.HTTP) }

// Handlers is the HTTP surface with /metrics apart (serve's --metrics-addr).
func (a *App) Handlers() server.Handlers { return server.NewHandlers(a.HTTP) }

// Close stops what New started: the live hub's polls and the caches'
// goroutines. The databases are the caller's.
func (a *App) Close() {
	if a.HTTP.ResponseCache != nil {
		a.HTTP.ResponseCache.Close()
	}
	a.Live.Close()
	a.Catalog.Close()
}

// Orders builds checkout, payments and after-sales on writer, each once:
// the timeout closer asks payments before closing an order with a started
// payment (checkout.PaymentCheck); after-sales decide every refund and
// drive payments to send it (aftersale.Refunds); payments settles the
// providers' answers and hands what they refund to the after-sales
// (payments.Settlement).
func Orders(writer *store.DB, co checkout.Config, pc payments.Config, ac aftersale.Config) (*checkout.Service, *payments.Service, *aftersale.Service) {
	ask := &paymentCheck{}
	if co.Payments == nil {
		co.Payments = ask
	}
	if pc.Settlement == nil {
		pc.Settlement = aftersale.Settlement{}
	}
	orders := checkout.New(writer, co)
	ask.Service = payments.New(writer, pc)
	return orders, ask.Service, aftersale.New(writer, ac, orders, ask.Service)
}

// paymentCheck is checkout's PaymentCheck: the payments service, set after
// checkout's is built.
type paymentCheck struct{ *payments.Service }
