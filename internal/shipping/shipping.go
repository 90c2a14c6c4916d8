// Package shipping is where orders go and what shipping them costs:
// customers' address books, freight templates (运费模板, seed 003's
// ls_freight and ls_freight_config), and the fee, a pure function of an
// order's lines, its templates and the address's region (fee.go). It is
// the one writer of address, address_book and shipping_template. Checkout
// reads through it when it places an order (the fee goes into
// pricing.Price and is frozen on the order with a copy of the address);
// shipments and the order states after payment are checkout's.
package shipping

import (
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// The errors of shipping, mapped to their codes in resolvers/errors.go.
var (
	// ErrAddressRequired: an order of goods that ship under a template has
	// no address, or an order without one is shipped.
	ErrAddressRequired = errs.New(errs.InvalidInput, "an address is required")
	// ErrUnavailable: no rule of a goods' template covers the address's
	// region; the message names the goods and the region.
	ErrUnavailable = errs.New(errs.Conflict, "shipping unavailable")
)

// OrderAddress is where an order ships: the fields of an address, copied
// onto the order (orders.shipping_address) so that editing or removing the
// book's entry never changes an order.
type OrderAddress struct {
	Name       string `json:"name"`
	Phone      string `json:"phone"`
	RegionCode string `json:"regionCode"`
	Province   string `json:"province"`
	City       string `json:"city"`
	District   string `json:"district"`
	Line       string `json:"line"`
	PostalCode string `json:"postalCode"`
}

// Address is an entry of a customer's address book.
type Address struct {
	ID int64
	OrderAddress
	IsDefault bool
}

// AddressInput is an address as a customer writes it.
type AddressInput struct {
	OrderAddress
	IsDefault bool
}

// Rule charges the regions it names: FirstFee for up to FirstUnits units,
// and NextFee for each NextUnits (or part of them) beyond. A region code is
// "*" (everywhere), 2 digits (a province), 4 (a city) or 6 (a district).
type Rule struct {
	RegionCodes []string
	FirstUnits  int64
	FirstFee    money.Money
	NextUnits   int64
	NextFee     money.Money
}

// Template is a freight template: what its goods' units are (pieces or
// grams), its rules, and the subtotal from which its lines ship free (nil:
// never).
type Template struct {
	ID        int64
	Name      string
	ChargeBy  enums.ChargeBy
	Rules     []Rule
	FreeOver  *money.Money
	Version   int64
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Service keeps address books and freight templates.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns the shipping service on db.
func New(db *store.DB) *Service {
	return &Service{db: db, now: func() time.Time { return time.Now().UTC() }}
}
