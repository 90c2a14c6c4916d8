package promo

import (
	"storefront/internal/pricing"
	"storefront/internal/vocab/enums"
)

// Adjustment is the coupon as an adjustment of the order's money (or of a
// cart's, priced as its order would be): its discount, negative, over the
// lines in its scope.
func (a Applied) Adjustment() pricing.Adjustment {
	return pricing.Adjustment{Kind: enums.AdjustCoupon, SourceID: a.UserCouponID, Label: a.Label, Amount: -a.Discount, Scope: a.Scope}
}
