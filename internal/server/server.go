// Package server assembles the HTTP surface: GraphQL, the playground and the
// operations endpoints. It wires; it holds no business logic.
package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"storefront/internal/checkout"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/vocab/input"
	"storefront/resolvers"
	"storefront/web"
	"storefront/web/admin"
)

// Options configures the handler.
type Options struct {
	DB       *store.DB
	Resolver *resolvers.Resolver
	Signer   *auth.Signer
	// OIDC verifies the tokens of one OpenID provider beside Signer's
	// (auth/oidc); nil: only Signer's. /readyz answers 503 until its keys
	// have loaded.
	OIDC          auth.Issuer
	Playground    bool
	Introspection bool
	MaxBodyBytes  int64
	// Collectors are extra metrics for /metrics (domain counters); the
	// catalog cache's are added without being listed here.
	Collectors []prometheus.Collector
	// DemoToken signs the /shop/ page in as the demo customer; only --demo sets it.
	DemoToken string
	// PaymentNotify serves POST /payments/{provider}/notify and each
	// provider's own paths, PaymentRoutes (nil: not mounted).
	PaymentNotify http.Handler
	// PaymentRoutes are the providers' own notification paths, each with
	// the provider it serves (payments.Config.Routes).
	PaymentRoutes map[string]string
	// Metrics receives the GraphQL and payment counters and is exported on
	// /metrics (nil: New makes its own).
	Metrics *metrics.Metrics
	// RequestTimeout bounds each GraphQL request and notification: a
	// database that stops answering yields UNAVAILABLE, never a hung client.
	RequestTimeout time.Duration
	// MaxDepth, MaxComplexity and MaxAliases refuse expensive queries
	// before any resolver runs (0: DefaultMaxDepth, DefaultMaxComplexity,
	// DefaultMaxAliases).
	MaxDepth, MaxComplexity, MaxAliases int
	// MaxResponseBytes ends a query whose answer grows past it with
	// QUERY_TOO_COMPLEX (0: DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// QueryCacheBytes bounds the parsed-query cache and, separately, the
	// persisted-query store (0: DefaultQueryCacheBytes).
	QueryCacheBytes int64
	// MaxPersistedQueryBytes is the largest query that may be registered
	// as a persisted query (0: DefaultMaxPersistedQueryBytes).
	MaxPersistedQueryBytes int
	// ResponseCache serves anonymous cacheable queries from finished
	// answers (respcache.go); nil: every request is executed, as before it
	// existed. It must validate against Resolver.Catalog.
	ResponseCache *ResponseCache
	// RateLimiter limits each client's mutations (ratelimit.go); nil:
	// no limit, as in the benchmarks that drive one handler in process.
	RateLimiter *RateLimiter
	// Live configures subscriptions over WebSocket, served when
	// Resolver.Live is set (websocket.go).
	Live LiveOptions
	// Tracing gives /graphql and the payment notifications a server span
	// (their traceparent its parent) and each GraphQL operation its own;
	// nil: none, and nothing of tracing on the request's path.
	Tracing *tracing.Tracing

	// tokens routes each bearer token to Signer or OIDC (build sets it).
	tokens *auth.Tokens
}

// Handlers are the service's HTTP surface split in two, for serving
// /metrics on a listener of its own (an address only the monitoring
// network reaches): Public is everything else and answers 404 on /metrics.
type Handlers struct {
	Public  http.Handler
	Metrics http.Handler
}

// DefaultRequestTimeout is Options.RequestTimeout when unset.
const DefaultRequestTimeout = 10 * time.Second

// New returns the service's root handler, /metrics included.
func New(o Options) http.Handler { return build(o, true).Public }

// NewHandlers returns the public handler without /metrics and the /metrics
// handler apart.
func NewHandlers(o Options) Handlers { return build(o, false) }

func build(o Options, metricsOnPublic bool) Handlers {
	o = withDefaults(o)
	o.tokens = auth.NewTokens(o.Signer, o.OIDC)
	m := o.Metrics
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(m.Collectors()...)
	if o.DB != nil {
		// storefront_db_* : open, in use, idle connections and waits for one.
		reg.MustRegister(prometheus.WrapCollectorWithPrefix("storefront_", collectors.NewDBStatsCollector(o.DB.SQL, o.DB.Dialect.Name())))
	}
	if o.Resolver != nil && o.Resolver.Catalog != nil {
		reg.MustRegister(CatalogCacheCollector(o.Resolver.Catalog))
	}
	reg.MustRegister(o.Collectors...)
	t := &httpTransport{m: m, gone: newDisconnects()}
	reg.MustRegister(t.gone)
	if o.ResponseCache != nil {
		t.cache = o.ResponseCache
		reg.MustRegister(newRespCacheCollector(t.cache))
	}
	if o.RateLimiter != nil {
		t.limit = o.RateLimiter
		reg.MustRegister(t.limit.refused)
	}

	o.Live.conns = &liveConns{}
	reg.MustRegister(o.Live.conns)

	mux := http.NewServeMux()
	gql := newGraphQL(o.Resolver, o, m, t)
	graphql := o.Tracing.Server("/graphql", t.cachedFront(o.MaxBodyBytes, withRequestID(privateNoStore(limitBody(o.MaxBodyBytes, o.tokens.Middleware(idempotencyKey(gql)))))))
	mux.Handle("/graphql", graphql)
	if o.Playground {
		mux.Handle("GET /{$}", playgroundHandler("storefront", "/graphql"))
	}
	mux.Handle("/shop/", web.Handler(web.Options{DemoToken: o.DemoToken}))
	mux.Handle("/admin/", admin.Handler())
	if o.PaymentNotify != nil {
		notify := timeout(o.RequestTimeout, countNotifications(m, o.PaymentNotify))
		mux.Handle("POST /payments/{provider}/notify", o.Tracing.Server("/payments/{provider}/notify", notify))
		for path, provider := range o.PaymentRoutes {
			mux.Handle("POST "+path, o.Tracing.Server(path, ForProvider(provider, notify)))
		}
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", ready(o.DB, o.OIDC))
	metricsH := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	if metricsOnPublic {
		mux.Handle("GET /metrics", metricsH)
	}
	return Handlers{Public: requestID(graphqlFirst(graphql, withRequestID(mux))), Metrics: metricsH}
}

// positive is v, or d when v is not positive (an option left unset).
func positive[T int | int64 | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func withDefaults(o Options) Options {
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.Metrics == nil {
		o.Metrics = metrics.New()
	}
	o.RequestTimeout = positive(o.RequestTimeout, DefaultRequestTimeout)
	o.MaxDepth = positive(o.MaxDepth, DefaultMaxDepth)
	o.MaxComplexity = positive(o.MaxComplexity, DefaultMaxComplexity)
	o.MaxAliases = positive(o.MaxAliases, DefaultMaxAliases)
	o.MaxResponseBytes = positive(o.MaxResponseBytes, DefaultMaxResponseBytes)
	o.QueryCacheBytes = positive(o.QueryCacheBytes, DefaultQueryCacheBytes)
	o.MaxPersistedQueryBytes = positive(o.MaxPersistedQueryBytes, DefaultMaxPersistedQueryBytes)

	return o
}

// timeout bounds a plain HTTP handler's context (the payment notification):
// its database calls give up at the deadline and it answers 503.
func timeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limitBody refuses bodies over n bytes with 413 before GraphQL parses them.
// A body of unknown length (chunked) is read up to the limit first: past
// it, gqlgen would only see a read error and answer 200 with a GraphQL error.
func limitBody(n int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > n {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, n)
		if r.ContentLength < 0 {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				var tooBig *http.MaxBytesError
				if errors.As(err, &tooBig) {
					http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				} else {
					http.Error(w, "could not read the request body", http.StatusBadRequest)
				}
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		next.ServeHTTP(w, r)
	})
}

// idempotencyKey hands the Idempotency-Key header to checkout when the key
// rule accepts it (package input). One it refuses never reaches checkout:
// the refusal waits in the context for textRule, which answers the
// operation INVALID_INPUT as it would a bad argument (a key PostgreSQL or
// MariaDB cannot store would fail a whole batch of orders).
func idempotencyKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("Idempotency-Key"); k != "" {
			if err := input.Key("Idempotency-Key header", k); err != nil {
				r = r.WithContext(context.WithValue(r.Context(), badKeyKey{}, err))
			} else {
				r = r.WithContext(checkout.WithIdempotencyKey(r.Context(), k))
			}
		}
		next.ServeHTTP(w, r)
	})
}

type badKeyKey struct{}

// badKeyHeader is the key rule's refusal of this request's Idempotency-Key
// header, or nil.
func badKeyHeader(ctx context.Context) error {
	err, _ := ctx.Value(badKeyKey{}).(error)
	return err
}
