// Package checkout places, cancels and closes orders. Stock moves by one
// conditional UPDATE per SKU in ascending SKU order inside one short
// transaction; retries are absorbed by idempotency keys.
package checkout

import (
	"context"
	"time"

	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Order is an order as clients see it; the GraphQL type Order binds to it.
type Order struct {
	ID      int64
	OrderSn string
	UserID  string
	Status  enums.OrderStatus
	Amount  money.Money
	// Subtotal is the lines' sum; Amount = Subtotal + Σ Adjustments'
	// amounts (adjust.go). Discount (− the negative ones) and ShippingFee
	// (the fee) are their sums, stored with the order.
	Subtotal    money.Money
	Discount    money.Money
	Adjustments []*Adjustment
	// UserCouponID is the claimed coupon the order locked or used (0:
	// none): the coupon kind's claim, given back or used with the order.
	UserCouponID int64
	Currency     string
	Remark       string
	NeedsReview  bool
	Lines        []*OrderLine
	CreatedAt    time.Time
	ExpiresAt    time.Time
	// Shipping (shipto.go, ship.go, receipt.go): the fee is the SHIPPING
	// adjustment's amount; the address is a copy (nil: none yet).
	ShippingFee     money.Money
	ShippingAddress *shipping.OrderAddress
	ShippedAt       *time.Time
	CompletedAt     *time.Time
	// ClosedAt is when it was closed or refunded.
	ClosedAt *time.Time
	// RefundedAmount is the money refunds confirmed; it never
	// exceeds Amount, and the order is REFUNDED when it equals it.
	RefundedAmount money.Money
	// PaidPaymentID is the payment that paid it (0: unpaid, or paid before
	// orders named their payment); written once, with PAID.
	PaidPaymentID int64

	version   int64       // orders.version as read (setOrderAddress's CAS)
	shipments []*Shipment // read for a page of orders at once (LoadShipments); nil: not read
}

// OrderLine is a snapshot of one bought SKU.
type OrderLine struct {
	ItemID       int64
	GoodsID      int64
	GoodsName    string
	SpecValueStr string
	UnitPrice    money.Money
	Quantity     int64
	// StockMode is the goods' mode when the order was placed; the line's
	// later transitions follow it.
	StockMode enums.StockMode
	// PoolID is the stock pool the line was sold from; 0 for main stock.
	PoolID int64
	// Discount is the line's share of the order's discounts (adjust.go).
	Discount money.Money

	// ShippedQuantity is how many of its units shipments carried.
	ShippedQuantity int64
	// AfterSaleQuantity is how many of its units open or finished
	// after-sales hold; WithheldQuantity those of them refunded unshipped,
	// which never ship.
	AfterSaleQuantity int64
	WithheldQuantity  int64

	// limit is the goods' purchase limit as resolved (nil: none), and
	// counted whether the line's units went to its purchase counter.
	limit   *int64
	counted bool

	poolLimit int64           // the pool's per-buyer limit, as resolved (pool lines being placed)
	id        int64           // the line's row, once written
	lockState enums.LockState // as read (lock-mode lines)
}

// LineID is the line's row id, the key of after-sales' per-line CAS.
func (l *OrderLine) LineID() int64 { return l.id }

type idemKey struct{}

// WithIdempotencyKey carries the Idempotency-Key header to placeOrder.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idemKey{}, key)
}

// IdempotencyKeyFrom returns the header's key ("" when none was sent).
func IdempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idemKey{}).(string)
	return k
}

// Service places and closes orders.
type Service struct {
	db      *store.DB
	cfg     Config
	now     func() time.Time
	groups  groups
	batcher batcher     // the database's way of running a batch (batcher.go)
	coupons promo.Terms // the terms of the coupons orders used
	// adjusters are the kinds of adjustment orders are priced with, in
	// order: the coupon, then Config.Adjusters (the shipping fee is last,
	// from shipTo).
	adjusters []Adjuster
	// loneOnPlain: an order that finds the group path idle takes the plain
	// path (SQLite; see placeLone).
	loneOnPlain bool
	// hook runs at the named stages of a batch transaction (tests inject
	// failures there).
	hook func(stage string) error
	// plant, when set, runs on every order as it is made, on either path:
	// tests make one order a row the database refuses (group_fault_test.go).
	plant func(*Order)
	// closing, when set, runs in the timeout closer's transaction on the
	// orders it has just closed, before it commits: tests make a claim
	// fail there (closer_test.go).
	closing func(won []*Order) error
	// claimMax is the most orders one transaction of the timeout closer
	// closes (claimSize; the benchmark compares it with 1).
	claimMax int
}

// New returns a checkout service on db.
func New(db *store.DB, cfg Config) *Service {
	def := DefaultConfig() // the group path's sizes are spelled there
	settings.Positive(&cfg.GroupMax, def.GroupMax)
	settings.Positive(&cfg.GroupInFlight, def.GroupInFlight)
	settings.Positive(&cfg.PoolBatchMax, def.PoolBatchMax)
	s := &Service{db: db, cfg: cfg, now: func() time.Time { return time.Now().UTC() }, batcher: newBatcher(db, cfg.GroupInFlight),
		loneOnPlain: true, claimMax: claimSize,
		groups: groups{perSource: map[source]int{}, rest: map[int64]time.Time{}, shop: map[int64]int64{}, inflight: map[[2]string]bool{}}}
	s.adjusters = append([]Adjuster{couponKind{&s.coupons}}, cfg.Adjusters...)
	return s
}

// Config returns the service's configuration.
func (s *Service) Config() Config { return s.cfg }
