package checkout

import (
	"storefront/internal/inventory"
	"storefront/internal/vocab/errs"
)

// The errors of the checkout domain, each of an errs category (or the
// category itself); resolvers/errors.go maps each to its extensions.code.
// Wrap them with %w so messages can name the SKU or order.
var (
	ErrInvalidInput    = errs.InvalidInput
	ErrNotFound        = errs.NotFound
	ErrInvalidQuantity = errs.New(errs.InvalidInput, "invalid quantity")
	ErrSkuUnavailable  = errs.New(errs.Conflict, "SKU unavailable")
	// ErrOutOfStock is inventory's: stock is inventory's to refuse.
	ErrOutOfStock            = inventory.ErrOutOfStock
	ErrIdempotencyInProgress = errs.New(errs.Conflict, "a request with this idempotency key is still being processed")
	ErrIdempotencyKeyReused  = errs.New(errs.InvalidInput, "this idempotency key was used with a different input")
	ErrInvalidOrderState     = errs.New(errs.Conflict, "the order is not in a state that allows this")
	// ErrPriceChanged: a line's price rose above ItemInput.MaxPrice.
	ErrPriceChanged = errs.New(errs.Conflict, "a price rose above the one the buyer saw")
)
