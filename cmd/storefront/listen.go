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
	"time"

	"storefront/internal/app"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
)

// serverFlags are serve's listeners, its identity and its secret.
type serverFlags struct {
	Addr            string        `name:"addr" env:"STOREFRONT_ADDR" default:"127.0.0.1:8080" help:"listen address"`
	Demo            bool          `name:"demo" env:"STOREFRONT_DEMO" help:"migrate, seed the demo catalog, print demo tokens"`
	InstanceID      string        `name:"instance-id" env:"STOREFRONT_INSTANCE_ID" help:"this instance's id, the same across its restarts and unique among the instances of one database: the outbox and webhook claims it makes carry it, and at start it takes back its own at once instead of waiting out their lease (default: host name/--addr)"`
	MetricsAddr     string        `name:"metrics-addr" env:"STOREFRONT_METRICS_ADDR" help:"serve /metrics on this address only (default: on --addr)"`
	Introspection   *bool         `name:"introspection" env:"STOREFRONT_INTROSPECTION" help:"allow GraphQL introspection and the playground (default on with --demo)"`
	ShutdownTimeout time.Duration `name:"shutdown-timeout" env:"STOREFRONT_SHUTDOWN_TIMEOUT" default:"15s" help:"how long in-flight requests may drain on SIGTERM"`
	JWT             jwtFlags      `embed:""`

	instance string // InstanceID or its default, checked by Validate
}

func (s *serverFlags) Validate() error {
	id, err := instanceID(s.InstanceID, s.Addr)
	s.instance = id
	return err
}

// introspection is --introspection, on with --demo unless given.
func (s *serverFlags) introspection() bool {
	if s.Introspection != nil {
		return *s.Introspection
	}
	return s.Demo
}

// signer signs with STOREFRONT_JWT_SECRET; --demo makes up a secret for
// this process when none is set.
func (s *serverFlags) signer() (*auth.Signer, error) {
	if s.JWT.Secret == "" {
		if !s.Demo {
			return nil, errors.New("STOREFRONT_JWT_SECRET is not set (use --demo to generate one for this process)")
		}
		var b [32]byte
		_, _ = rand.Read(b[:])
		s.JWT.Secret = hex.EncodeToString(b[:])
	}
	return auth.NewSigner(s.JWT.Secret)
}

// seedDemo seeds the demo catalog and shipping and prints both demo
// tokens; the customer's is rendered into /shop/, so the page is signed in.
func seedDemo(ctx context.Context, sf *app.App, signer *auth.Signer) error {
	ids, err := demo.Seed(ctx, sf.Catalog)
	if err != nil {
		return err
	}
	printDemo(ids)
	if err := seedShipping(ctx, sf.Catalog, sf.Ship); err != nil {
		return err
	}
	admin, err := signer.Issue("demo-admin", auth.Admin, 24*time.Hour)
	if err != nil {
		return err
	}
	customer, err := signer.Issue(demo.Customer, auth.Customer, 24*time.Hour)
	if err != nil {
		return err
	}
	fmt.Printf("demo admin token:    %s\ndemo customer token: %s\n", admin, customer)
	sf.HTTP.DemoToken = customer
	return nil
}

// handler is the public handler and, with --metrics-addr, /metrics on a
// listener of its own, where only the monitoring network reaches (the
// public one answers 404 there); stop closes that listener (scrapes need
// no draining).
func (s *serverFlags) handler(sf *app.App) (public http.Handler, metricsAt string, stop func(), err error) {
	if s.MetricsAddr == "" {
		return sf.Handler(), "with --addr", func() {}, nil
	}
	h := sf.Handlers()
	ln, err := net.Listen("tcp", s.MetricsAddr)
	if err != nil {
		return nil, "", nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h.Metrics)
	srv := httpServer(mux)
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("metrics listener failed", "err", err)
		}
	}()
	return h.Public, ln.Addr().String(), func() { srv.Close() }, nil
}

// serveUntil serves srv on ln until ctx ends, then drains in-flight
// requests for at most drain.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, drain time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: draining in-flight requests")
	sctx, cancel := context.WithTimeout(context.Background(), drain)
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
