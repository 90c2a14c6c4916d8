// Package aftersale owns after-sales and decides every refund: a buyer's
// request for a refund, or a return and a refund, of some of an order's
// units; an admin's decision; an admin's refund of the whole order
// (refundOrder); what a provider's confirmation or a refund made at the
// provider does to the after-sale and the order (Settlement); the money
// and the stock going back exactly once. It is the one writer of
// after_sale, after_sale_line and after_sale_log. The order's columns move
// through checkout's typed functions, stock through inventory's, refund
// rows and their sending through payments' (the Refunds interface), all
// inside this package's transactions (docs/after-sales.md).
package aftersale

import (
	"context"
	"time"

	"storefront/ent"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
)

// Config is the after-sales' settings.
type Config struct {
	// Window is how long after an order completes its buyer may still ask
	// (--after-sale-window).
	Window time.Duration
}

// DefaultConfig is a week after completion.
func DefaultConfig() Config { return Config{Window: 168 * time.Hour} }

// Refunds is payments' side of a refund, as after-sales drive it: the
// refund rows and the providers are payments' (payments.Service implements
// it); what is refunded, how much and when is decided here.
type Refunds interface {
	// PayingTx takes the row of the payment that paid order o, the first
	// lock of every refunding transaction, and names it (its provider
	// configured).
	PayingTx(ctx context.Context, tx *ent.Tx, o *checkout.Order) (payments.Paying, error)
	// OpenRefundTx writes the after-sale's refund of p PENDING, or finds
	// the one it has (its number derived from the after-sale's: a retry
	// reuses it, a refund the provider refused gives way to the next
	// number; "" when one returned the money already).
	OpenRefundTx(ctx context.Context, tx *ent.Tx, p payments.Paying, ask payments.RefundAsk) (refundNo string, err error)
	// SendRefund sends the refund numbered no, once per claim, and settles
	// the provider's answer.
	SendRefund(ctx context.Context, no string) error
}

// Service runs after-sales.
type Service struct {
	db      *store.DB
	cfg     Config
	orders  *checkout.Service
	refunds Refunds
	now     func() time.Time
}

// New returns the after-sales service on db (the writer).
func New(db *store.DB, cfg Config, orders *checkout.Service, refunds Refunds) *Service {
	settings.Positive(&cfg.Window, DefaultConfig().Window)
	return &Service{db: db, cfg: cfg, orders: orders, refunds: refunds, now: func() time.Time { return time.Now().UTC() }}
}
