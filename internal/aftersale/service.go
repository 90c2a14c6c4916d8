// Package aftersale owns after-sales (issue 43): a buyer's request for a
// refund, or a return and a refund, of some of an order's units; an
// admin's decision; the money and the stock going back exactly once. It is
// the one writer of after_sale, after_sale_line and after_sale_log. The
// order's columns move through checkout's typed functions, stock through
// inventory's, refunds through payments' (the Refunds interface), all
// inside this package's transactions (docs/after-sales.md).
package aftersale

import (
	"context"
	"time"

	"storefront/ent"
	"storefront/internal/checkout"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/money"
)

// Config is the after-sales' settings.
type Config struct {
	// Window is how long after an order completes its buyer may still ask
	// (--after-sale-window).
	Window time.Duration
}

// DefaultConfig is a week after completion.
func DefaultConfig() Config { return Config{Window: 168 * time.Hour} }

// RefundAsk is a refund an after-sale needs sent.
type RefundAsk struct {
	OrderID     int64
	AfterSaleID int64
	AfterSaleSn string
	Amount      money.Money
	Reason      string
}

// Refunds is payments' side: the refund rows and their sending are
// payments' (it writes the refund table and talks to the providers).
type Refunds interface {
	// LockPayingTx takes the row of the payment that paid the order: the
	// first lock of every refunding transaction (payments' lock order).
	LockPayingTx(ctx context.Context, tx *ent.Tx, orderID int64) error
	// OpenRefundTx writes the after-sale's refund PENDING, or finds the
	// one it has (its number derived from the after-sale's: a retry reuses
	// it, a refund the provider refused gives way to the next number).
	OpenRefundTx(ctx context.Context, tx *ent.Tx, ask RefundAsk) (refundNo string, err error)
	// SendRefund sends the refund numbered no, once per claim.
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
