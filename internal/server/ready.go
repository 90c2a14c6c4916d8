package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
)

// ready answers /readyz: 200 while the database takes requests, 503 while it
// does not (unreachable, or a Galera node out of the cluster or not Synced:
// store.DB.Ready), so a load balancer sends buyers to the instances whose
// node can sell. It checks on every call: a node that rejoins is ready again
// at the next probe, with nothing to reset. With an OpenID provider (idp),
// also 503 until the provider's keys have first loaded: an instance started
// while the provider is unreachable would answer its users UNAVAILABLE,
// where the instances that loaded the keys before serve them (a provider
// gone later keeps the keys, and the instance ready).
func ready(db *store.DB, idp auth.Issuer) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ready(ctx); err != nil {
			slog.WarnContext(ctx, "not ready", "err", err)
			http.Error(w, "database not ready: "+reason(err), http.StatusServiceUnavailable)
			return
		}
		if idp != nil {
			if err := idp.Ready(); err != nil {
				// The loader logs each failure with its cause; the body
				// names the provider only.
				http.Error(w, "identity provider not ready: the keys of "+idp.Issuer()+" have not loaded", http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = w.Write([]byte("ready\n"))
	}
}

// reason is what the probe's body says: the Galera state when that is the
// cause, otherwise only that the database is unreachable (no driver text).
func reason(err error) string {
	if s := store.NotReadyReason(err); s != "" {
		return s
	}
	return "unreachable"
}
