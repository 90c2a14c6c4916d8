package resolvers

import (
	"storefront/graph"
	"storefront/internal/promo"
)

// couponInput converts createCoupon's input; validDays is 30 when left out.
func couponInput(in graph.CreateCouponInput) (promo.CreateInput, error) {
	var p ids
	out := promo.CreateInput{Name: in.Name, Kind: in.Kind, AmountOff: in.AmountOff, MaxDiscount: in.MaxDiscount,
		MinSubtotal: in.MinSubtotal, GoodsIDs: p.list(in.GoodsIds), TotalQuantity: in.TotalQuantity,
		PerCustomerLimit: in.PerCustomerLimit, Code: in.Code, ValidDays: 30}
	if in.PercentOff != nil {
		n := int(min(max(*in.PercentOff, -1), 1000))
		out.PercentOff = &n
	}
	if in.ValidDays != nil {
		out.ValidDays = int(min(max(*in.ValidDays, -1), 1_000_000))
	}
	out.ClaimStartsAt, out.ClaimEndsAt = in.ClaimStartsAt, in.ClaimEndsAt
	return out, p.err
}
