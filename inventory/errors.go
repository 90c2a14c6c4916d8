package inventory

import "errors"

var (
	// ErrOutOfStock: the CAS found less stock than a negative change needs.
	ErrOutOfStock = errors.New("out of stock")
	// ErrNotFound: the SKU does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalidInput: malformed or out-of-range input.
	ErrInvalidInput = errors.New("invalid input")
	// ErrVersionConflict: the SKU changed since the caller read it.
	ErrVersionConflict = errors.New("version conflict: reload and retry")
)
