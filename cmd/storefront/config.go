package main

import (
	"flag"
	"os"
	"strconv"
	"strings"
	"time"

	"storefront/internal/aftersale"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/server"
)

// config is the whole configuration: defaults, then STOREFRONT_* variables,
// then flags.
type config struct {
	DB              string
	DBWriter        string // serve's --db-writer
	Addr            string
	InstanceID      string // serve's --instance-id (instance.go)
	Migrate         bool
	Demo            bool
	JWTSecret       string
	OIDC            oidc.Config // serve's OpenID provider (oidc.go)
	Introspection   bool
	ShutdownTimeout time.Duration
	Checkout        checkout.Config
	AfterSale       aftersale.Config
	Catalog         catalog.Config
	CloseInterval   time.Duration
	CartTTL         time.Duration
	OutboxInterval  time.Duration
	Events          eventsConfig // where order events go (events.go)
	// Operations: the periodic stock check and the GraphQL endpoint's limits.
	ReconcileInterval time.Duration
	RequestTimeout    time.Duration
	MaxQueryDepth     int
	MaxComplexity     int
	GCPercent         int // serve's GC target unless GOGC is set (internal/gctune)
	// The GraphQL endpoint's other limits (limits.go) and where /metrics
	// is served ("": on Addr, with everything else).
	MaxAliases             int
	MaxResponseBytes       int64
	QueryCacheBytes        int64
	MaxPersistedQueryBytes int
	MetricsAddr            string
	// The response cache (respcache.go).
	ResponseCache        bool
	ResponseCacheMaxCost int64
	// Limits on mutations per client (ratelimit.go), and the proxies whose
	// X-Forwarded-For is believed (parsed into RateLimits by validRateLimits).
	RateLimits     server.RateLimits
	TrustedProxies string
	// MemoryLimit is the Go runtime's soft memory limit (memlimit.go).
	MemoryLimit int64
	Live        liveConfig // live.go
	Pay         payFlags   // payments.go

	// The pools' sizes on a server (store.WithPools): each of --db and
	// --db-writer gets both.
	DBMaxConns, DBBatchConns int
	// Tracing is serve's OpenTelemetry settings (tracing.go); tracer the
	// provider built from them (nil: off).
	Tracing tracing.Config
	tracer  *tracing.Tracing
}

// flagSet registers the flags shared by commands that open the database.
func flagSet(name string, c *config) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&c.DB, "db", env("DB", store.DefaultDB), "database: sqlite:PATH, mysql:DSN or postgres:DSN; mysql:DSN1,DSN2,… for the nodes of a Galera cluster, of which the first ready one takes the connections (STOREFRONT_DB)")
	fs.IntVar(&c.DBMaxConns, "db-max-conns", int(envInt("DB_MAX_CONNS", store.DefaultMaxConns)), "most connections this process keeps to a MySQL or PostgreSQL server, besides the batch pool's (STOREFRONT_DB_MAX_CONNS)")
	fs.IntVar(&c.DBBatchConns, "db-batch-conns", int(envInt("DB_BATCH_CONNS", store.DefaultBatchConns)), "most connections of the group-commit batch's pool; at least twice --group-inflight (STOREFRONT_DB_BATCH_CONNS)")
	c.JWTSecret = os.Getenv("STOREFRONT_JWT_SECRET")
	return fs
}

func env(name, def string) string {
	if v, ok := os.LookupEnv("STOREFRONT_" + name); ok {
		return v
	}
	return def
}

func envBool(name string, def bool) bool {
	if v, err := strconv.ParseBool(env(name, "")); err == nil {
		return v
	}
	return def
}

func envInt(name string, def int64) int64 {
	if v, err := strconv.ParseInt(env(name, ""), 10, 64); err == nil {
		return v
	}
	return def
}

// checkoutFlags registers the checkout settings shared by serve and
// close-expired.
func checkoutFlags(fs *flag.FlagSet, c *checkout.Config) {
	*c = checkout.DefaultConfig()
	fs.DurationVar(&c.OrderTTL, "order-ttl", envDuration("ORDER_TTL", c.OrderTTL), "unpaid orders older than this are closed (STOREFRONT_ORDER_TTL)")
	fs.Int64Var(&c.MaxQuantity, "max-quantity", envInt("MAX_QUANTITY", c.MaxQuantity), "most units of one SKU per order (STOREFRONT_MAX_QUANTITY)")
	fs.StringVar(&c.Currency, "currency", env("CURRENCY", c.Currency), "ISO 4217 currency of orders (STOREFRONT_CURRENCY)")
	fs.IntVar(&c.CloseBatch, "close-batch", int(envInt("CLOSE_BATCH", int64(c.CloseBatch))), "order ids the timeout closer reads per query; it closes them 32 per transaction (STOREFRONT_CLOSE_BATCH)")
	fs.BoolVar(&c.GroupCommit, "group-commit", envBool("GROUP_COMMIT", c.GroupCommit), "batch single-SKU orders that arrive while others are in flight into one transaction (STOREFRONT_GROUP_COMMIT)")
	fs.IntVar(&c.GroupMax, "group-max", int(envInt("GROUP_MAX", int64(c.GroupMax))), "most orders one group-commit transaction takes (STOREFRONT_GROUP_MAX)")
	fs.IntVar(&c.GroupInFlight, "group-inflight", int(envInt("GROUP_INFLIGHT", int64(c.GroupInFlight))), "most group-commit transactions in flight at once (STOREFRONT_GROUP_INFLIGHT)")
	fs.IntVar(&c.PoolBatchMax, "pool-batch-max", int(envInt("POOL_BATCH_MAX", int64(c.PoolBatchMax))), "most orders one group-commit transaction of a stock pool takes (STOREFRONT_POOL_BATCH_MAX)")
	fs.DurationVar(&c.AutoConfirm, "auto-confirm-after", envDuration("AUTO_CONFIRM_AFTER", c.AutoConfirm), "the closer completes SHIPPED orders whose receipt was not confirmed this long after they shipped (STOREFRONT_AUTO_CONFIRM_AFTER)")
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(env(name, "")); err == nil {
		return v
	}
	return def
}

// isSet reports whether a flag or its variable was given explicitly.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	_, inEnv := os.LookupEnv("STOREFRONT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")))
	return set || inEnv
}
