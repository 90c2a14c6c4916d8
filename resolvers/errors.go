package resolvers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/auth"
	"storefront/catalog"
	"storefront/enums"
	"storefront/money"
	"storefront/scalar"
	"storefront/skumatrix"
	"storefront/store"
)

// errorCode pairs a domain sentinel with its stable extensions.code.
type errorCode struct {
	err  error
	code string
}

// codes maps domain sentinels to the stable extensions.code of
// API-CONVENTIONS.md. This table (plus the per-domain tables that
// registerCodes appends from init) is the only place the mapping lives.
var codes = []errorCode{
	{auth.ErrUnauthenticated, "UNAUTHENTICATED"},
	{auth.ErrForbidden, "FORBIDDEN"},
	{catalog.ErrNotFound, "NOT_FOUND"},
	{skumatrix.ErrInvalidSelection, "INVALID_SELECTION"},
	{skumatrix.ErrTooManyDimensions, "TOO_MANY_DIMENSIONS"},
	{skumatrix.ErrTooManySKUs, "TOO_MANY_SKUS"},
	{skumatrix.ErrEmptyDimension, "INVALID_INPUT"},
	{skumatrix.ErrDuplicateValue, "INVALID_INPUT"},
	{catalog.ErrVersionConflict, "VERSION_CONFLICT"},
	{catalog.ErrInvalidInput, "INVALID_INPUT"},
	{money.ErrInvalid, "INVALID_INPUT"},
	{scalar.ErrInvalidID, "INVALID_INPUT"},
	{enums.ErrInvalid, "INVALID_INPUT"},
	{store.ErrUnavailable, "UNAVAILABLE"},
}

// registerCodes adds a domain's sentinels; call it from an init in that
// domain's resolver helper file (e.g. checkout_errors.go).
func registerCodes(c ...errorCode) { codes = append(codes, c...) }

// Code returns the extensions.code for err, or "" when it is not a known
// domain error.
func Code(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	// The request timeout ran out, or a connection failed in a path that did
	// not classify its error: either way "retry later", not INTERNAL.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(store.Classify(err), store.ErrUnavailable) {
		return "UNAVAILABLE"
	}
	return ""
}

// PresentError sets extensions.code on every error and hides internals:
// an error the table does not know is logged and answered as INTERNAL.
func PresentError(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	if _, ok := gerr.Extensions["code"]; ok {
		return gerr // gqlgen's own parse/validation errors already carry a code
	}
	code := Code(err)
	if code == "" {
		code = gqlgenCode(err)
	}
	if code == "" {
		slog.ErrorContext(ctx, "internal error", "err", err, "path", gerr.Path.String())
		gerr.Message = "internal error"
		code = "INTERNAL"
	} else if code == "UNAVAILABLE" {
		slog.WarnContext(ctx, "database unavailable", "err", err)
		gerr.Message = "the database is unavailable; retry later"
	}
	if gerr.Extensions == nil {
		gerr.Extensions = map[string]any{}
	}
	gerr.Extensions["code"] = code
	return gerr
}

// Recover turns a resolver panic into a generic INTERNAL error and a log
// line: never a crashed process, never a stack trace in a response.
func Recover(ctx context.Context, p any) error {
	slog.ErrorContext(ctx, "panic in resolver", "panic", p)
	return &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": "INTERNAL"}}
}
