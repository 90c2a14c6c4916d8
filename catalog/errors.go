package catalog

import "errors"

var (
	// ErrNotFound: an id that does not exist or is not visible to the caller.
	ErrNotFound = errors.New("not found")
	// ErrInvalidInput: malformed or out-of-range admin input.
	ErrInvalidInput = errors.New("invalid input")
	// ErrVersionConflict: an optimistic version check failed.
	ErrVersionConflict = errors.New("version conflict: reload and retry")
)
