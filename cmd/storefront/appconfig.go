package main

import (
	"context"
	"crypto/sha256"

	"storefront/internal/app"
	"storefront/internal/cart"
	"storefront/internal/live"
	"storefront/internal/payments"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/server"
)

// app is serve's configuration as the composition root takes it.
func (c *config) app(pay payments.Config, m *metrics.Metrics, instance string, closing context.Context, memLimit int64, idp *oidc.Provider) app.Config {
	// The ids of carts handed out empty are signed with a key of their own
	// derived from the JWT secret: every server of one database shares it.
	cartKey := sha256.Sum256([]byte("storefront cart ids\x00" + c.JWTSecret))
	cfg := app.Config{
		Catalog: c.Catalog, Checkout: c.Checkout, Payments: pay, Metrics: m, AfterSale: c.AfterSale,
		Cart:     cart.Config{TTL: c.CartTTL, Secret: cartKey[:]},
		Live:     live.Config{Interval: c.Live.Interval},
		Webhooks: c.Events.webhooks(instance),
		Outbox:   outbox.Config{Instance: instance},
		Tracing:  c.tracer,
		HTTP: server.Options{
			Playground: c.Introspection, Introspection: c.Introspection,
			RequestTimeout: c.RequestTimeout, MaxDepth: c.MaxQueryDepth, MaxComplexity: c.MaxComplexity,
			MaxAliases: c.MaxAliases, MaxResponseBytes: c.MaxResponseBytes, QueryCacheBytes: c.QueryCacheBytes,
			MaxPersistedQueryBytes: c.MaxPersistedQueryBytes, RateLimiter: server.NewRateLimiter(c.RateLimits),
			Live: c.Live.options(closing, memLimit),
		},
	}
	if idp != nil { // a nil *oidc.Provider in the interface would not be nil
		cfg.HTTP.OIDC = idp
		cfg.HTTP.Collectors = append(cfg.HTTP.Collectors, idp.Collector())
	}
	if c.ResponseCache {
		cfg.ResponseCacheMaxCost = c.ResponseCacheMaxCost
	}
	return cfg
}
