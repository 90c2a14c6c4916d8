package inventory

import "storefront/internal/vocab/errs"

// The errors of the inventory domain; resolvers/errors.go maps each to its
// extensions.code.
var (
	// ErrOutOfStock: the CAS found less stock than a negative change needs
	// (checkout.ErrOutOfStock is this error).
	ErrOutOfStock = errs.New(errs.Conflict, "out of stock")
	// ErrNotFound: the SKU does not exist.
	ErrNotFound = errs.NotFound
	// ErrInvalidInput: malformed or out-of-range input.
	ErrInvalidInput = errs.InvalidInput
	// ErrVersionConflict: the SKU changed since the caller read it.
	ErrVersionConflict = errs.VersionConflict
)
