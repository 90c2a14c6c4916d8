package checkout

import "errors"

// Sentinels of the checkout domain; resolvers/checkout_errors.go maps each to
// its extensions.code. Wrapped with %w so messages can name the SKU or order.
var (
	ErrInvalidInput          = errors.New("invalid input")
	ErrInvalidQuantity       = errors.New("invalid quantity")
	ErrNotFound              = errors.New("not found")
	ErrSkuUnavailable        = errors.New("SKU unavailable")
	ErrOutOfStock            = errors.New("out of stock")
	ErrIdempotencyInProgress = errors.New("a request with this idempotency key is still being processed")
	ErrIdempotencyKeyReused  = errors.New("this idempotency key was used with a different input")
	ErrInvalidOrderState     = errors.New("the order is not in a state that allows this")
)
