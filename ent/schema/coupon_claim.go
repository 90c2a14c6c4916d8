package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// CouponClaim counts one customer's claims of one coupon: a guarded counter
// (internal/inventory/counter.go) whose limit is the coupon's
// per_customer_limit, added to in the claim's transaction.
type CouponClaim struct{ ent.Schema }

func (CouponClaim) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("coupon_claim")}
}

func (CouponClaim) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("coupon_id"),
		field.String("user_id").MaxLen(64),
		field.Int64("units").Default(0),
	}
}

func (CouponClaim) Indexes() []ent.Index {
	return []ent.Index{index.Fields("coupon_id", "user_id").Unique()}
}
