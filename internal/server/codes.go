package server

import (
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/inventory"
	"storefront/internal/vocab/errs"
	"storefront/resolvers"
)

// refusal is an error of the HTTP layer with the extensions.code the error
// table (resolvers/errors.go) gives err: codes are spelled in that table only.
func refusal(err error, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	e.Extensions = map[string]any{"code": resolvers.Code(err)}
	return e
}

var (
	codeInvalidInput = resolvers.Code(errs.InvalidInput)
	codeOutOfStock   = resolvers.Code(inventory.ErrOutOfStock)
	codeUnavailable  = resolvers.Code(errs.Unavailable)
)
