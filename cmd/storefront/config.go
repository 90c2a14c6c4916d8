package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"storefront/internal/aftersale"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/live"
	"storefront/internal/payments/providers"
	"storefront/internal/platform/auth/oidc"
	"storefront/internal/platform/events"
	"storefront/internal/platform/gctune"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/server"
)

// cli is the binary's whole configuration, declared once: every command,
// its flags by area, and each flag's STOREFRONT_* variable, default and
// help in its tags (kong's). Defaults that a package owns are its
// constants, named as ${vars} (defaults below).
type cli struct {
	LogLevel slog.Level `name:"log-level" env:"STOREFRONT_LOG_LEVEL" default:"info" group:"runtime" help:"least level logged: debug (with it, every event the log sink gets), info, warn or error"`

	Serve        serveCmd        `cmd:"" help:"Serve GraphQL, the shop and the admin console, and run the closer, the dispatcher and the checks."`
	Migrate      migrateCmd      `cmd:"" help:"Bring the schema up to date."`
	SeedDemo     seedDemoCmd     `cmd:"" name:"seed-demo" help:"Write the demo catalog and its shipping."`
	CloseExpired closeExpiredCmd `cmd:"" name:"close-expired" help:"One pass of the timeout closer (for cron, or to drain a backlog by hand)."`
	Reconcile    reconcileCmd    `cmd:"" help:"Check stock against the ledger, the listing, the category tree, coupons and money; exit 1 on a difference."`
	SeedBench    seedBenchCmd    `cmd:"" name:"seed-bench" help:"Write a generated catalog for the listing benchmark."`
	Notify       notifyCmd       `cmd:"" help:"Sign and send a mock provider's notification to a running server."`
	Token        tokenCmd        `cmd:"" help:"Print a token signed with STOREFRONT_JWT_SECRET."`
}

// newCLI is the configuration with every registered payment provider's
// settings in the commands that take payments.
func newCLI() *cli {
	c := &cli{}
	c.Serve.Pay.Providers = providers.NewFlags()
	c.CloseExpired.Pay.Providers = providers.NewFlags()
	return c
}

// groups are --help's areas, in this order.
var groups = []kong.Group{
	{Key: "server", Title: "Server"},
	{Key: "database", Title: "Database"},
	{Key: "checkout", Title: "Orders, carts and after-sales"},
	{Key: "catalog", Title: "Catalog cache"},
	{Key: "graphql", Title: "GraphQL limits and the response cache"},
	{Key: "rate", Title: "Rate limits"},
	{Key: "events", Title: "Events and webhooks"},
	{Key: "live", Title: "Live stock (WebSocket)"},
	{Key: "auth", Title: "OpenID provider"},
	{Key: "payments", Title: "Payments (a provider is switched on by any of its flags; then all it needs must be given)"},
	{Key: "runtime", Title: "Runtime and checks"},
	{Key: "tracing", Title: "Tracing (OpenTelemetry)"},
}

// defaults are the ${vars} of the tags: the defaults their packages own.
func defaults() kong.Vars {
	co, rl, tr := checkout.DefaultConfig(), server.DefaultRateLimits(), tracing.DefaultConfig()
	s := fmt.Sprint // a duration as 1h0m0s, a float in its shortest form
	return kong.Vars{
		"db": store.DefaultDB, "db_max_conns": s(store.DefaultMaxConns), "db_batch_conns": s(store.DefaultBatchConns),
		"order_ttl": s(co.OrderTTL), "max_quantity": s(co.MaxQuantity), "currency": co.Currency, "close_batch": s(co.CloseBatch),
		"group_commit": s(co.GroupCommit), "group_max": s(co.GroupMax), "group_inflight": s(co.GroupInFlight),
		"pool_batch_max": s(co.PoolBatchMax), "auto_confirm_after": s(co.AutoConfirm),
		"after_sale_window": s(aftersale.DefaultConfig().Window), "cart_ttl": s(cart.DefaultConfig().TTL),
		"stock_ttl": s(catalog.DefaultStockTTL), "cache_max_cost": s(catalog.DefaultCacheMaxCost),
		"events_stream": events.DefaultStream, "events_subject_prefix": events.DefaultSubjectPrefix,
		"request_timeout": s(server.DefaultRequestTimeout), "max_query_depth": s(server.DefaultMaxDepth), "max_query_complexity": s(server.DefaultMaxComplexity),
		"max_query_aliases": s(server.DefaultMaxAliases), "max_response_bytes": s(server.DefaultMaxResponseBytes),
		"query_cache_bytes": s(server.DefaultQueryCacheBytes), "max_persisted_query_bytes": s(server.DefaultMaxPersistedQueryBytes),
		"response_cache_max_cost": s(server.DefaultResponseCacheMaxCost),
		"rate_anonymous":          s(rl.Anonymous.PerSecond), "rate_anonymous_burst": s(rl.Anonymous.Burst),
		"rate_account": s(rl.Account.PerSecond), "rate_account_burst": s(rl.Account.Burst),
		"live_interval": s(live.DefaultInterval), "live_max_conns_per_addr": s(server.DefaultMaxLiveConnsPerAddr),
		"live_max_subscriptions": s(server.DefaultMaxSubscriptionsPerConn), "live_ping_interval": s(server.DefaultLivePingInterval),
		"oidc_role_claim": oidc.DefaultRoleClaim, "oidc_admin_role": oidc.DefaultAdminRole, "oidc_jwks_refresh": s(oidc.DefaultJWKSRefresh),
		"otel_sample_ratio": s(tr.Ratio), "otel_keep_errors": s(tr.KeepErrors), "otel_keep_slow": s(tr.KeepSlow),
		"gc_percent": s(gctune.DefaultPercent),
	}
}

// newParser parses into c; help goes to out, and exit is called after it.
func newParser(c *cli, out io.Writer, exit func(int)) (*kong.Kong, error) {
	return kong.New(c, kong.Name("storefront"), kong.Description("GraphQL storefront backend. Every flag's variable is named after it."),
		kong.Vars(defaults()), kong.ExplicitGroups(groups), kong.ValueFormatter(helpValue),
		kong.Writers(out, os.Stderr), kong.Exit(exit), kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}))
}

// helpValue is a flag's help with its default (a bool's too, which kong's
// placeholder leaves out) and its variable.
func helpValue(v *kong.Value) string {
	h := v.Help
	if v.HasDefault && v.Default != "" && v.IsBool() && v.Default != "false" {
		h += " (default " + v.Default + ")"
	}
	if len(v.Tag.Envs) > 0 {
		h += " ($" + strings.Join(v.Tag.Envs, ", $") + ")"
	}
	return h
}
