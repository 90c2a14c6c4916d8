package cart

import (
	"fmt"

	"storefront/internal/checkout"
	"storefront/internal/vocab/errs"
)

// ErrCompleted refuses a change to a cart that already became an order
// (CART_COMPLETED); a repeated checkout answers that order instead.
var ErrCompleted = errs.New(errs.Conflict, "the cart is completed: it became an order")

// errPending: a checkout of the cart is running, or ended without telling
// whether it placed the order. The cart's lines are frozen until a
// checkoutCart settles it; the client's answer to both is "retry checkout".
var errPending = fmt.Errorf("%w: a checkout of this cart is in progress or did not finish; call checkoutCart again", checkout.ErrIdempotencyInProgress)
