package main

import (
	"context"
	"crypto/sha256"
	"time"

	"storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/live"
	"storefront/internal/payments"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/tracing"
	"storefront/internal/server"
)

// catalogFlags are the product-view cache's.
type catalogFlags struct {
	StockTTL     time.Duration `name:"stock-ttl" env:"STOREFRONT_STOCK_TTL" default:"${stock_ttl}" help:"how long product pages may show cached stock"`
	CacheMaxCost int64         `name:"cache-max-cost" env:"STOREFRONT_CACHE_MAX_COST" default:"${cache_max_cost}" help:"product-view cache memory bound in bytes"`
}

// app is serve's configuration as the composition root takes it; closing
// ends every WebSocket connection (on shutdown).
func (c *serveCmd) app(pay payments.Config, m *metrics.Metrics, tr *tracing.Tracing, closing context.Context, idp *oidc.Provider) app.Config {
	// The ids of carts handed out empty are signed with a key of their own
	// derived from the JWT secret: every server of one database shares it.
	cartKey := sha256.Sum256([]byte("storefront cart ids\x00" + c.Server.JWT.Secret))
	cat := catalog.DefaultConfig()
	cat.StockTTL, cat.CacheMaxCost = c.Catalog.StockTTL, c.Catalog.CacheMaxCost
	g := &c.GraphQL
	cfg := app.Config{
		Catalog: cat, Checkout: c.Checkout.Checkout.config(), Payments: pay, Metrics: m,
		AfterSale: aftersale.Config{Window: c.Checkout.AfterSaleWindow},
		Cart:      cart.Config{TTL: c.Checkout.Checkout.CartTTL, Secret: cartKey[:]},
		Live:      live.Config{Interval: c.Live.Interval},
		Webhooks:  c.Events.webhooks(c.Server.instance),
		Outbox:    outbox.Config{Instance: c.Server.instance},
		Tracing:   tr,
		HTTP: server.Options{
			Playground: c.Server.introspection(), Introspection: c.Server.introspection(),
			RequestTimeout: g.RequestTimeout, MaxDepth: g.MaxQueryDepth, MaxComplexity: g.MaxComplexity,
			MaxAliases: g.MaxAliases, MaxResponseBytes: g.MaxResponseBytes, QueryCacheBytes: g.QueryCacheBytes,
			MaxPersistedQueryBytes: g.MaxPersistedQueryBytes, RateLimiter: server.NewRateLimiter(c.Rate.limits),
			Live: c.Live.options(closing, c.memoryLimit()),
		},
		ResponseCacheMaxCost: g.Cache.bytes(),
	}
	if idp != nil { // a nil *oidc.Provider in the interface would not be nil
		cfg.HTTP.OIDC = idp
		cfg.HTTP.Collectors = append(cfg.HTTP.Collectors, idp.Collector())
	}
	return cfg
}
