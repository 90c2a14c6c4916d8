package main

import (
	"errors"
	"flag"
	"fmt"
	"strconv"

	"storefront/internal/server"
)

// rateLimitFlags registers serve's limits on mutations: a token bucket per
// anonymous client address and one per token subject (internal/server/ratelimit.go;
// docs/operations.md, "Rate limits", says why the defaults).
func rateLimitFlags(fs *flag.FlagSet, c *config) {
	d := server.DefaultRateLimits()
	fs.Float64Var(&c.RateLimits.Anonymous.PerSecond, "rate-anonymous", envFloat("RATE_ANONYMOUS", d.Anonymous.PerSecond),
		"mutation root fields per second one anonymous client address may send, sustained; 0: no limit (STOREFRONT_RATE_ANONYMOUS)")
	fs.IntVar(&c.RateLimits.Anonymous.Burst, "rate-anonymous-burst", int(envInt("RATE_ANONYMOUS_BURST", int64(d.Anonymous.Burst))),
		"mutation root fields one anonymous client address may send at once (STOREFRONT_RATE_ANONYMOUS_BURST)")
	fs.Float64Var(&c.RateLimits.Account.PerSecond, "rate-account", envFloat("RATE_ACCOUNT", d.Account.PerSecond),
		"mutation root fields per second one token subject (customer or admin) may send, sustained; 0: no limit (STOREFRONT_RATE_ACCOUNT)")
	fs.IntVar(&c.RateLimits.Account.Burst, "rate-account-burst", int(envInt("RATE_ACCOUNT_BURST", int64(d.Account.Burst))),
		"mutation root fields one token subject may send at once (STOREFRONT_RATE_ACCOUNT_BURST)")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", env("TRUSTED_PROXIES", ""),
		"comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client (STOREFRONT_TRUSTED_PROXIES)")
}

func validRateLimits(c *config) error {
	l := &c.RateLimits
	if l.Anonymous.PerSecond < 0 || l.Account.PerSecond < 0 {
		return errors.New("--rate-anonymous and --rate-account must be 0 (no limit) or more")
	}
	if l.Anonymous.Burst < 1 || l.Account.Burst < 1 {
		return errors.New("--rate-anonymous-burst and --rate-account-burst must be at least 1")
	}
	p, err := server.ParseTrustedProxies(c.TrustedProxies)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	l.TrustedProxies = p
	return nil
}

func envFloat(name string, def float64) float64 {
	if v, err := strconv.ParseFloat(env(name, ""), 64); err == nil {
		return v
	}
	return def
}
