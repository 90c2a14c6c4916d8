package main

import (
	"context"
	"errors"
	"time"

	"github.com/alecthomas/kong"

	"storefront/internal/payments"
	"storefront/internal/payments/providers"
)

// payFlags are payments' flags: the shop's public URL, the refund sweep,
// and every registered provider's own (docs/payments.md).
type payFlags struct {
	PublicURL      string          `name:"public-url" env:"STOREFRONT_PUBLIC_URL" help:"the shop's public base URL, e.g. https://shop.example.com: providers are told to notify <public-url>/payments/<provider>/notify"`
	RefundInterval time.Duration   `name:"refund-interval" env:"STOREFRONT_REFUND_INTERVAL" default:"1m" help:"how often refunds still PENDING at their provider are sent again, with the same refund number"`
	Providers      providers.Flags `embed:""`
}

func (p *payFlags) Validate() error {
	if p.RefundInterval <= 0 {
		return errors.New("--refund-interval must be positive")
	}
	return nil
}

// config is payments' configuration with every provider the flags switch
// on; kctx is the parse that filled them.
func (p *payFlags) config(kctx *kong.Context, demo bool, currency string) (payments.Config, error) {
	cfg := payments.DefaultConfig()
	cfg.RefundRetry = p.RefundInterval
	ps, err := p.Providers.Providers(kctx, providers.Env{Demo: demo, PublicURL: p.PublicURL, Currency: currency})
	if err != nil {
		return cfg, err
	}
	return cfg.With(ps...), nil
}

// sweepRefunds sends refunds still PENDING at their provider again every
// interval (the same refund number: never a second refund).
func sweepRefunds(ctx context.Context, pay *payments.Service, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		every(ctx, "refunds sent again", interval, pay.SweepRefunds)
	}()
	return func() { cancel(); <-done }
}
