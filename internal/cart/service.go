// Package cart keeps shoppers' carts: lines that survive devices
// and sign-ins, re-priced and re-checked on every read, and a checkout that
// turns a cart into exactly one order through checkout.Service.Place. It is
// the only writer of the cart and cart_line tables.
package cart

import (
	"context"
	"crypto/rand"
	"time"

	"storefront/internal/checkout"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Config holds the cart's timings and bounds.
type Config struct {
	// TTL: a cart its shopper has not changed for this long is gone (reads
	// answer null, the purge deletes it).
	TTL time.Duration
	// Lease is how long a checkout of a cart keeps others off it before a
	// retry may take over (longer than any request may run).
	Lease time.Duration
	// PurgeBatch is how many expired carts the purge deletes per statement.
	PurgeBatch int
	// Secret signs the ids of carts handed out empty and not stored
	// (empty.go). Every server of one database needs the same; empty means
	// a random one per Service, so after a restart such ids read as null.
	Secret []byte
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{TTL: 10 * 24 * time.Hour, Lease: 30 * time.Second, PurgeBatch: 500}
}

// Service reads and changes carts.
type Service struct {
	db       *store.DB
	checkout *checkout.Service
	cfg      Config
	now      func() time.Time
	// placeOrder is checkout.Place; tests wrap it to lose its answer as a
	// connection dying after COMMIT would.
	placeOrder func(context.Context, checkout.PlaceInput) (*checkout.Order, error)
}

// New returns a cart service on db that places orders through co; the most
// lines and units per line are co's, so that a cart always fits one order.
func New(db *store.DB, co *checkout.Service, cfg Config) *Service {
	d := DefaultConfig()
	settings.Positive(&cfg.TTL, d.TTL)
	settings.Positive(&cfg.Lease, d.Lease)
	settings.Positive(&cfg.PurgeBatch, d.PurgeBatch)
	if len(cfg.Secret) == 0 {
		cfg.Secret = make([]byte, 32)
		_, _ = rand.Read(cfg.Secret)
	}
	return &Service{db: db, checkout: co, cfg: cfg, now: func() time.Time { return time.Now().UTC() }, placeOrder: co.Place}
}

// SetClock replaces the service's clock (tests of expiry).
func (s *Service) SetClock(now func() time.Time) { s.now = now }

// Cart is a cart as its shopper sees it; the GraphQL type Cart binds to it.
// Prices, cost and warnings are those of the moment it was read.
type Cart struct {
	ID        string // the token
	Status    enums.CartStatus
	Lines     []*Line
	Cost      Cost
	Warnings  []*Warning
	UpdatedAt time.Time
	ExpiresAt time.Time

	owner        string
	orderSn      string
	userCouponID int64 // the chosen coupon (0: none)
}

// Owner is the customer the cart belongs to ("" while anonymous).
func (c *Cart) Owner() string { return c.owner }

// UserCouponID is the customer's coupon chosen for the order (0: none).
func (c *Cart) UserCouponID() int64 { return c.userCouponID }

// OrderSn is the order the cart became ("" while OPEN).
func (c *Cart) OrderSn() string { return c.orderSn }

// Line is one SKU of a cart at its current price.
type Line struct {
	ID        int64
	ItemID    int64
	GoodsID   int64
	Quantity  int64
	UnitPrice money.Money
	Subtotal  money.Money
}

// Cost is the cart's total at current prices.
type Cost struct {
	Subtotal money.Money
	// Discount is the chosen coupon's, as the order would get it (0: none,
	// or it does not apply: a warning says why).
	Discount money.Money
	// Adjustments are the chosen coupon's discount as the order would get
	// it (the shipping fee is CartCost.shipping's, by address).
	Adjustments   []*checkout.Adjustment
	TotalQuantity int64

	lines []*Line // what it is the cost of (Lines)
}

// Lines are the lines the cost is of: the shipping fee's resolver quotes
// them (CartCost.shipping).
func (c *Cost) Lines() []*Line { return c.lines }

// Warning codes (API-CONVENTIONS.md): a line that cannot be bought as it is.
const (
	WarnOutOfStock     = "OUT_OF_STOCK"
	WarnNotEnoughStock = "NOT_ENOUGH_STOCK"
	WarnSkuUnavailable = "SKU_UNAVAILABLE"
	WarnPriceChanged   = "PRICE_CHANGED"
	// WarnCouponNotApplicable is of the cart's chosen coupon (no line): it
	// is the error code checkout would answer with it.
	WarnCouponNotApplicable = "COUPON_NOT_APPLICABLE"
)

// Warning is a problem of one line, found when the cart was read.
type Warning struct {
	Code    string
	LineID  *int64
	Message string
}
