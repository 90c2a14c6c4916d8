package server

import (
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/resolvers"
)

// Compose builds every service of the app on db, its catalog with cat,
// and returns their resolvers: the composition root's (internal/app).
// This package's own tests cannot import app (app imports server), so the
// external test package sets it (compose_ext_test.go) before any test runs.
var Compose func(t testing.TB, db *store.DB, cat catalog.Config) *resolvers.Resolver
