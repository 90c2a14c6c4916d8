// Package payments verifies provider notifications and merges them with
// redirects into one payment row per (provider, payment id), never
// downgrading PAID, with side effects exactly once; it starts payments and
// sends refunds through the providers (Provider), each a package of its own.
package payments

import (
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Payment is a payment as clients see it; the GraphQL type Payment binds to it.
type Payment struct {
	Provider  string
	PaymentID string
	Status    enums.PaymentStatus
	Amount    money.Money
	Currency  string
}

// Service processes payments.
type Service struct {
	db  *store.DB
	cfg Config
	now func() time.Time
}
