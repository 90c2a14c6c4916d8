package main

import (
	"errors"
	"fmt"

	"storefront/internal/server"
)

// rateFlags are serve's limits on mutations: a token bucket per anonymous
// client address and one per token subject (internal/server/ratelimit.go;
// docs/operations.md, "Rate limits", says why the defaults).
type rateFlags struct {
	Anonymous      float64 `name:"rate-anonymous" env:"STOREFRONT_RATE_ANONYMOUS" default:"${rate_anonymous}" help:"mutation root fields per second one anonymous client address may send, sustained; 0: no limit"`
	AnonymousBurst int     `name:"rate-anonymous-burst" env:"STOREFRONT_RATE_ANONYMOUS_BURST" default:"${rate_anonymous_burst}" help:"mutation root fields one anonymous client address may send at once"`
	Account        float64 `name:"rate-account" env:"STOREFRONT_RATE_ACCOUNT" default:"${rate_account}" help:"mutation root fields per second one token subject (customer or admin) may send, sustained; 0: no limit"`
	AccountBurst   int     `name:"rate-account-burst" env:"STOREFRONT_RATE_ACCOUNT_BURST" default:"${rate_account_burst}" help:"mutation root fields one token subject may send at once"`
	TrustedProxies string  `name:"trusted-proxies" env:"STOREFRONT_TRUSTED_PROXIES" help:"comma-separated addresses or CIDR prefixes of proxies whose X-Forwarded-For names the client"`

	limits server.RateLimits // parsed by Validate
}

func (r *rateFlags) Validate() error {
	if r.Anonymous < 0 || r.Account < 0 {
		return errors.New("--rate-anonymous and --rate-account must be 0 (no limit) or more")
	}
	if r.AnonymousBurst < 1 || r.AccountBurst < 1 {
		return errors.New("--rate-anonymous-burst and --rate-account-burst must be at least 1")
	}
	p, err := server.ParseTrustedProxies(r.TrustedProxies)
	if err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	r.limits = server.RateLimits{Anonymous: server.Rate{PerSecond: r.Anonymous, Burst: r.AnonymousBurst},
		Account: server.Rate{PerSecond: r.Account, Burst: r.AccountBurst}, TrustedProxies: p}
	return nil
}
