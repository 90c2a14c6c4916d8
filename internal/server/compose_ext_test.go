package server_test

import (
	"testing"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/resolvers"
)

func init() {
	server.Compose = func(t testing.TB, db *store.DB, cat catalog.Config) *resolvers.Resolver {
		cfg := app.DefaultConfig()
		cfg.Catalog = cat
		a := app.New(db, nil, nil, cfg)
		t.Cleanup(a.Close)
		return a.Resolver
	}
}
