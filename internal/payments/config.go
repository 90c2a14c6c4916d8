package payments

import (
	"time"

	"storefront/internal/platform/tracing"
)

// Config configures payments.
type Config struct {
	// Providers by name (see internal/payments/providers, where each
	// provider package is registered).
	Providers map[string]Provider
	// Settlement moves what a confirmed refund refunds beyond payments'
	// rows (internal/app sets it to the after-sales'); a service that
	// settles no refund (reconcile) may leave it nil.
	Settlement Settlement
	// Tracing gives every call to a provider a client span (nil: off).
	Tracing *tracing.Tracing
	// Tolerance bounds how old (or how far in the future) a notification's
	// timestamp may be: a captured notification cannot be replayed later.
	Tolerance time.Duration
	// MaxBody bounds a notification body; larger ones are refused with 413.
	MaxBody int64
	// DoubtLimit is how long past its expiry an unpaid order with a started
	// payment is kept open while its provider cannot be asked about it;
	// after that the closer closes it (money that arrives later is kept
	// and flagged, as for any payment of a closed order).
	DoubtLimit time.Duration
	// RefundRetry is the wait before a PENDING refund is sent again, after
	// a send whose answer was lost or that left it pending; it doubles each
	// time, up to RefundRetryMax.
	RefundRetry, RefundRetryMax time.Duration
	// PayWindow is the least time an order must have before its expiry
	// for startPayment to start a payment of it.
	PayWindow time.Duration
}

// DefaultConfig has no providers.
func DefaultConfig() Config {
	return Config{Providers: map[string]Provider{}, Tolerance: 5 * time.Minute, MaxBody: 64 << 10,
		DoubtLimit: 24 * time.Hour, RefundRetry: time.Minute, RefundRetryMax: time.Hour, PayWindow: time.Minute}
}

// With returns c with providers ps added (by name).
func (c Config) With(ps ...Provider) Config {
	all := make(map[string]Provider, len(c.Providers)+len(ps))
	for n, p := range c.Providers {
		all[n] = p
	}
	for _, p := range ps {
		all[p.Name()] = p
	}
	c.Providers = all
	return c
}
