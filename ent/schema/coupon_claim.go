package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
)

// CouponClaim counts one customer's claims of one coupon: a guarded counter
// (internal/inventory/counter.go) whose limit is the coupon's
// per_customer_limit, added to in the claim's transaction.
type CouponClaim struct{ ent.Schema }

func (CouponClaim) Annotations() []schema.Annotation {
	return table("coupon_claim")
}

func (CouponClaim) Fields() []ent.Field {
	return buyerCounter("coupon_id")
}

func (CouponClaim) Indexes() []ent.Index {
	return buyerCounterIndex("coupon_id")
}
