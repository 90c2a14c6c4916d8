package testdb

import (
	"testing"

	"storefront/internal/platform/store"
)

// EachServer runs fn as a subtest on every server backend ("mysql",
// "postgres"): what takes many writers at once, or a server's own
// behaviour (row locks, lock waits, a query the server goes on with after
// its client gave up).
func EachServer(t *testing.T, fn func(t *testing.T, db *store.DB)) {
	t.Helper()
	for _, b := range Servers {
		t.Run(string(b), func(t *testing.T) { fn(t, Open(t, b)) })
	}
}
