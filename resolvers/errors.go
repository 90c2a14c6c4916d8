package resolvers

import (
	"context"
	"errors"
	"log/slog"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/cart"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/internal/vocab/paging"
	"storefront/internal/vocab/scalar"
	"storefront/skumatrix"
)

// CodeInternal answers an error the table does not know: a bug, logged.
const CodeInternal = "INTERNAL"

// ErrQueryTooComplex refuses an operation over the depth or complexity
// limit (internal/server/limits.go).
var ErrQueryTooComplex = errs.New(errs.InvalidInput, "query too complex")

// errorCode pairs an error with its stable extensions.code.
type errorCode struct {
	err  error
	code string
}

// codes maps errors to the stable extensions.code of API-CONVENTIONS.md,
// and is the only place that mapping lives. Code tries it in order, first
// match wins: precise errors first (each wraps an errs category, and its
// own code wins over the category's), then the sentinels of the packages
// below the domains, then the categories.
var codes = []errorCode{
	// Precise errors of the domains.
	{skumatrix.ErrInvalidSelection, "INVALID_SELECTION"},
	{skumatrix.ErrTooManyDimensions, "TOO_MANY_DIMENSIONS"},
	{skumatrix.ErrTooManySKUs, "TOO_MANY_SKUS"},
	{errs.VersionConflict, "VERSION_CONFLICT"},
	{inventory.ErrOutOfStock, "OUT_OF_STOCK"}, // also checkout.ErrOutOfStock
	{checkout.ErrInvalidQuantity, "INVALID_QUANTITY"},
	{checkout.ErrSkuUnavailable, "SKU_UNAVAILABLE"},
	{checkout.ErrIdempotencyInProgress, "IDEMPOTENCY_IN_PROGRESS"},
	{checkout.ErrIdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED"},
	{checkout.ErrInvalidOrderState, "INVALID_ORDER_STATE"},
	{checkout.ErrPriceChanged, "PRICE_CHANGED"},
	{inventory.ErrPoolNotActive, "POOL_NOT_ACTIVE"},
	{inventory.ErrPoolLimitExceeded, "POOL_LIMIT_EXCEEDED"},
	{cart.ErrCompleted, "CART_COMPLETED"},
	{promo.ErrCouponSoldOut, "COUPON_SOLD_OUT"},
	{promo.ErrCouponLimitExceeded, "COUPON_LIMIT_EXCEEDED"},
	{promo.ErrCouponNotApplicable, "COUPON_NOT_APPLICABLE"},
	{promo.ErrPurchaseLimit, "PURCHASE_LIMIT_EXCEEDED"},
	{shipping.ErrAddressRequired, "ADDRESS_REQUIRED"},
	{shipping.ErrUnavailable, "SHIPPING_UNAVAILABLE"},

	// Sentinels of value and algorithm packages, which use no category.
	{skumatrix.ErrEmptyDimension, "INVALID_INPUT"},
	{skumatrix.ErrDuplicateValue, "INVALID_INPUT"},
	{money.ErrInvalid, "INVALID_INPUT"},
	{scalar.ErrInvalidID, "INVALID_INPUT"},
	{scalar.ErrInvalidTime, "INVALID_INPUT"},
	{enums.ErrInvalid, "INVALID_INPUT"},
	{paging.ErrInvalid, "INVALID_INPUT"},

	// Refusals of the HTTP layer (server) that are not a category alone.
	{ErrQueryTooComplex, "QUERY_TOO_COMPLEX"},

	// The categories. errs.Conflict has no code of its own: every conflict
	// a client can meet is a precise error above, and one that is not is a
	// bug to be answered INTERNAL (and logged) until it gets a code.
	{errs.Unauthenticated, "UNAUTHENTICATED"},
	{errs.Forbidden, "FORBIDDEN"},
	{errs.NotFound, "NOT_FOUND"},
	{errs.InvalidInput, "INVALID_INPUT"},
	{errs.Unavailable, "UNAVAILABLE"},
	{errs.RateLimited, "RATE_LIMITED"},
}

// Code returns the extensions.code for err, or "" when it is not a known
// domain error.
func Code(err error) string {
	if c := codeOf(err); c != "" {
		return c
	}
	// The request timeout ran out, or a connection failed in a path that did
	// not classify its error: either way "retry later", not INTERNAL.
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(store.Classify(err), store.ErrUnavailable) {
		return codeOf(errs.Unavailable)
	}
	return ""
}

// codeOf is the table's code for err, or "".
func codeOf(err error) string {
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return ""
}

// codeUnavailable is the code PresentError words and logs as a database outage.
var codeUnavailable = codeOf(errs.Unavailable)

// gqlgenCode gives a code to refusals gqlgen raises itself, which carry no
// sentinel: they are the client's doing and must not be logged and
// answered as INTERNAL.
func gqlgenCode(err error) string {
	// The generated introspection resolvers return this exact error when
	// introspection is switched off.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == "introspection disabled" {
			return Code(errs.Forbidden)
		}
	}
	// A *gqlerror.Error reaching the presenter before any resolver ran
	// (no path) is a refused request: an APQ hash that does not match its
	// query, an undecodable body, an unsupported APQ version.
	var gerr *gqlerror.Error
	if errors.As(err, &gerr) && len(gerr.Path) == 0 {
		return Code(errs.InvalidInput)
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
		code = CodeInternal
	} else if code == codeUnavailable && !errors.Is(err, auth.ErrProviderUnavailable) {
		// The identity provider's keys not loaded yet say so themselves
		// (auth/oidc logs why); every other UNAVAILABLE is the database.
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
	return &gqlerror.Error{Message: "internal error", Extensions: map[string]any{"code": CodeInternal}}
}
