package resolvers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/payments"
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

// documented is every error a resolver can return with a code, and the code
// API-CONVENTIONS.md gives it. Each is checked bare, wrapped with %w as the
// domains return them, and joined with a driver's error.
var documented = []struct {
	name string
	err  error
	code string
}{
	{"errs.Unauthenticated", errs.Unauthenticated, "UNAUTHENTICATED"},
	{"errs.Forbidden", errs.Forbidden, "FORBIDDEN"},
	{"errs.NotFound", errs.NotFound, "NOT_FOUND"},
	{"errs.InvalidInput", errs.InvalidInput, "INVALID_INPUT"},
	{"errs.Unavailable", errs.Unavailable, "UNAVAILABLE"},
	{"errs.RateLimited", errs.RateLimited, "RATE_LIMITED"},
	{"errs.VersionConflict", errs.VersionConflict, "VERSION_CONFLICT"},
	{"store.ErrUnavailable", store.ErrUnavailable, "UNAVAILABLE"},
	{"store.ErrCommitUnknown", store.ErrCommitUnknown, "UNAVAILABLE"},

	{"skumatrix.ErrInvalidSelection", skumatrix.ErrInvalidSelection, "INVALID_SELECTION"},
	{"skumatrix.ErrTooManyDimensions", skumatrix.ErrTooManyDimensions, "TOO_MANY_DIMENSIONS"},
	{"skumatrix.ErrTooManySKUs", skumatrix.ErrTooManySKUs, "TOO_MANY_SKUS"},
	{"skumatrix.ErrEmptyDimension", skumatrix.ErrEmptyDimension, "INVALID_INPUT"},
	{"skumatrix.ErrDuplicateValue", skumatrix.ErrDuplicateValue, "INVALID_INPUT"},
	{"money.ErrInvalid", money.ErrInvalid, "INVALID_INPUT"},
	{"scalar.ErrInvalidID", scalar.ErrInvalidID, "INVALID_INPUT"},
	{"scalar.ErrInvalidTime", scalar.ErrInvalidTime, "INVALID_INPUT"},
	{"enums.ErrInvalid", enums.ErrInvalid, "INVALID_INPUT"},
	{"paging.ErrInvalid", paging.ErrInvalid, "INVALID_INPUT"},
	{"ErrQueryTooComplex", ErrQueryTooComplex, "QUERY_TOO_COMPLEX"},

	{"catalog.ErrSkuCodeTaken", catalog.ErrSkuCodeTaken, "INVALID_INPUT"},

	{"inventory.ErrOutOfStock", inventory.ErrOutOfStock, "OUT_OF_STOCK"},
	{"inventory.ErrNotFound", inventory.ErrNotFound, "NOT_FOUND"},
	{"inventory.ErrInvalidInput", inventory.ErrInvalidInput, "INVALID_INPUT"},
	{"inventory.ErrVersionConflict", inventory.ErrVersionConflict, "VERSION_CONFLICT"},
	{"inventory.ErrPoolNotActive", inventory.ErrPoolNotActive, "POOL_NOT_ACTIVE"},
	{"inventory.ErrPoolLimitExceeded", inventory.ErrPoolLimitExceeded, "POOL_LIMIT_EXCEEDED"},
	{"promo.ErrCouponSoldOut", promo.ErrCouponSoldOut, "COUPON_SOLD_OUT"},
	{"promo.ErrCouponLimitExceeded", promo.ErrCouponLimitExceeded, "COUPON_LIMIT_EXCEEDED"},
	{"promo.ErrCouponNotApplicable", promo.ErrCouponNotApplicable, "COUPON_NOT_APPLICABLE"},
	{"promo.ErrPurchaseLimit", promo.ErrPurchaseLimit, "PURCHASE_LIMIT_EXCEEDED"},

	{"checkout.ErrInvalidInput", checkout.ErrInvalidInput, "INVALID_INPUT"},
	{"checkout.ErrInvalidQuantity", checkout.ErrInvalidQuantity, "INVALID_QUANTITY"},
	{"checkout.ErrNotFound", checkout.ErrNotFound, "NOT_FOUND"},
	{"checkout.ErrSkuUnavailable", checkout.ErrSkuUnavailable, "SKU_UNAVAILABLE"},
	{"checkout.ErrOutOfStock", checkout.ErrOutOfStock, "OUT_OF_STOCK"},
	{"checkout.ErrIdempotencyInProgress", checkout.ErrIdempotencyInProgress, "IDEMPOTENCY_IN_PROGRESS"},
	{"checkout.ErrIdempotencyKeyReused", checkout.ErrIdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED"},
	{"checkout.ErrInvalidOrderState", checkout.ErrInvalidOrderState, "INVALID_ORDER_STATE"},
	{"checkout.ErrPriceChanged", checkout.ErrPriceChanged, "PRICE_CHANGED"},

	{"cart.ErrCompleted", cart.ErrCompleted, "CART_COMPLETED"},

	{"shipping.ErrAddressRequired", shipping.ErrAddressRequired, "ADDRESS_REQUIRED"},
	{"shipping.ErrUnavailable", shipping.ErrUnavailable, "SHIPPING_UNAVAILABLE"},

	// paymentReturn: a payment id of another order is invalid input there.
	{"payments.ErrOrderNotFound", payments.ErrOrderNotFound, "NOT_FOUND"},
	{"paymentReturn's other order", fmt.Errorf("%w: %w: mock/p-1", errs.InvalidInput, payments.ErrOtherOrder), "INVALID_INPUT"},
}

func TestCodeOfEveryDocumentedError(t *testing.T) {
	for _, d := range documented {
		for _, err := range []error{
			d.err,
			fmt.Errorf("%w: SKU 7", d.err),
			fmt.Errorf("placing: %w", fmt.Errorf("%w: SKU 7", d.err)),
			errors.Join(d.err, errors.New("UNIQUE constraint failed")),
		} {
			if got := Code(err); got != d.code {
				t.Errorf("Code(%s as %q) = %q, want %q", d.name, err, got, d.code)
			}
		}
	}
}

// TestEveryTableEntryIsDocumented keeps the table and the list above in
// step: an error given a code is given the documented one.
func TestEveryTableEntryIsDocumented(t *testing.T) {
	for i, c := range codes {
		found := false
		for _, d := range documented {
			if d.err == c.err {
				found = true
				if d.code != c.code {
					t.Errorf("codes[%d] (%s) = %q, documented %q", i, d.name, c.code, d.code)
				}
			}
		}
		if !found {
			t.Errorf("codes[%d] (%q → %s) is not in the documented list of errors_test.go", i, c.err, c.code)
		}
	}
}

// TestPreciseBeforeCategory: a precise error's own code wins over its
// category's, however it is wrapped.
func TestPreciseBeforeCategory(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code string
	}{
		{fmt.Errorf("%w: item 1: quantity 0, want 1 to 99", checkout.ErrInvalidQuantity), "INVALID_QUANTITY"},
		{checkout.ErrIdempotencyKeyReused, "IDEMPOTENCY_KEY_REUSED"},
		{fmt.Errorf("%w: SKU 3 (T L) has fewer than 2 left", inventory.ErrOutOfStock), "OUT_OF_STOCK"},
	} {
		if !errors.Is(tc.err, errs.InvalidInput) && !errors.Is(tc.err, errs.Conflict) {
			t.Errorf("%q is of no category", tc.err)
		}
		if got := Code(tc.err); got != tc.code {
			t.Errorf("Code(%q) = %q, want %q", tc.err, got, tc.code)
		}
	}
}

// TestConflictAloneIsInternal: the Conflict category has no code; a
// conflict without a precise error is a bug, answered INTERNAL and logged.
func TestConflictAloneIsInternal(t *testing.T) {
	if got := Code(errs.New(errs.Conflict, "some new conflict")); got != "" {
		t.Errorf("Code(a bare conflict) = %q, want \"\" (INTERNAL)", got)
	}
	if got := Code(payments.ErrOtherOrder); got != "" {
		t.Errorf("Code(payments.ErrOtherOrder) = %q, want \"\": it is answered only by the webhook", got)
	}
}

func TestAuthRefusals(t *testing.T) {
	_, err := auth.Require(context.Background(), auth.Admin)
	if got := Code(err); got != "UNAUTHENTICATED" {
		t.Errorf("Code(auth.Require without a token: %q) = %q, want UNAUTHENTICATED", err, got)
	}
	ctx := auth.WithPrincipal(context.Background(), auth.Principal{UserID: "u1", Role: auth.Customer})
	_, err = auth.Require(ctx, auth.Admin)
	if got := Code(err); got != "FORBIDDEN" {
		t.Errorf("Code(auth.Require as a customer: %q) = %q, want FORBIDDEN", err, got)
	}
}
