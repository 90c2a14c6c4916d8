package checkout

import (
	"context"
	"time"

	"storefront/internal/platform/tracing"
)

// Config holds checkout's limits and timings; DefaultConfig gives the
// defaults docs/checkout.md lists.
type Config struct {
	MaxQuantity int64         // per SKU per order, after merging duplicate lines
	MaxLines    int           // lines of one order, before merging
	OrderTTL    time.Duration // unpaid orders older than this are closed
	Currency    string        // ISO 4217 code stored on every order
	// Lease is how long a claimed idempotency key blocks duplicates before a
	// retry may take it over (a crashed request must not burn the key).
	Lease time.Duration
	// Retention is how long a finished key replays its order.
	Retention time.Duration
	// FallbackWindow: without a key, an identical input from the same user
	// within this window is the same request (seed 002's fallback key).
	FallbackWindow time.Duration
	CloseBatch     int // order ids the timeout closer reads per query (closed claimSize per transaction)
	// GroupCommit batches single-SKU orders that arrive while the group
	// path's transactions are busy into one transaction (group.go). Off:
	// every order takes the plain path.
	GroupCommit bool
	// GroupMax is the most orders one batch transaction takes (≤ 0: 64).
	GroupMax int
	// GroupInFlight is the most batch transactions in flight at once (≤ 0:
	// 2). Fewer, larger batches cost the database less per order; a server
	// with many cores may take more.
	GroupInFlight int
	// PoolBatchMax is the most orders one batch of a stock pool takes (≤ 0:
	// 16). A flash sale's batches are kept small, and beside the shop's
	// orders each is followed by a rest (poolRest), so that the shop's
	// ordinary orders never wait long behind the sale (docs/checkout.md).
	PoolBatchMax int
	// OnReplay, when set, is called for every placeOrder answered from a
	// finished idempotency key (metrics).
	OnReplay func()
	// Payments, when set, is asked before the timeout closer closes
	// expired orders (payments.Service, wired by internal/app).
	Payments PaymentCheck
	// AutoConfirm: the closer completes SHIPPED orders shipped this long
	// ago whose buyer did not confirm receipt (receipt.go).
	AutoConfirm time.Duration
	// Tracing gives each group-commit batch a span linked to its orders'
	// requests and keeps each order's trace on its OrderPlaced event (nil:
	// off). internal/app sets it.
	Tracing *tracing.Tracing
	// Adjusters are kinds of adjustment besides the coupon and the
	// shipping fee, applied between them in this order (adjust.go).
	Adjusters []Adjuster
}

// PaymentCheck is asked by the timeout closer about the expired orders it
// is about to close: a buyer may have paid at a provider whose notification
// was lost. It returns the orders not to close in this pass (paid meanwhile,
// or not known yet); an error ends the pass.
type PaymentCheck interface {
	Unsettled(ctx context.Context, orderIDs []int64) (map[int64]bool, error)
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		MaxQuantity:    999,
		MaxLines:       50,
		OrderTTL:       30 * time.Minute,
		Currency:       "CNY",
		Lease:          30 * time.Second,
		Retention:      24 * time.Hour,
		FallbackWindow: 10 * time.Second,
		CloseBatch:     500,
		GroupCommit:    true,
		GroupMax:       64,
		GroupInFlight:  2,
		PoolBatchMax:   16,
		AutoConfirm:    7 * 24 * time.Hour,
	}
}
