// Package promo is the one writer of coupons, claimed coupons and purchase
// counts: claims that no interleaving can take past a coupon's total or a
// customer's limit, the discount a coupon gives an order, the claimed
// coupon's state through its order's life, and the per-customer purchase
// limit of a goods. Its limits are guarded counters and its coupon locks row
// claims (internal/guard)
// and CASes in the caller's transaction, like stock.
package promo

import (
	"time"

	"storefront/ent/couponclaim"
	"storefront/ent/purchasecount"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// The errors a customer meets (API-CONVENTIONS.md spells their codes).
var (
	ErrCouponSoldOut       = errs.New(errs.Conflict, "every one of the coupon's total quantity has been claimed")
	ErrCouponLimitExceeded = errs.New(errs.Conflict, "the coupon's per-customer limit is reached")
	ErrCouponNotApplicable = errs.New(errs.Conflict, "the coupon does not apply")
	ErrPurchaseLimit       = errs.New(errs.Conflict, "the goods' purchase limit would be passed")
)

// CouponClaims counts each customer's claims of a coupon: its limit is the
// coupon's per_customer_limit.
var CouponClaims = &guard.CounterKind{Table: couponclaim.Table, Scope: couponclaim.FieldCouponID,
	Holder: couponclaim.FieldUserID, Units: couponclaim.FieldUnits, Exceeded: ErrCouponLimitExceeded}

// Purchases counts each customer's units of a goods in orders that stand:
// its limit is the goods' purchase_limit.
var Purchases = &guard.CounterKind{Table: purchasecount.Table, Scope: purchasecount.FieldGoodsID,
	Holder: purchasecount.FieldUserID, Units: purchasecount.FieldUnits, Exceeded: ErrPurchaseLimit}

// Service claims, lists and administers coupons.
type Service struct {
	db  *store.DB
	now func() time.Time
}

// New returns the promotions service on db.
func New(db *store.DB) *Service {
	return &Service{db: db, now: func() time.Time { return time.Now().UTC() }}
}
