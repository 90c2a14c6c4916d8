package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
)

// UserCoupon is one customer's claim of a coupon. Its status moves only by
// CAS on the old one: AVAILABLE → LOCKED (an order, order_sn set) → USED
// (paid), or back to AVAILABLE (or EXPIRED) when that order closes.
type UserCoupon struct{ ent.Schema }

func (UserCoupon) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("user_coupon")}
}

func (UserCoupon) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("coupon_id").Immutable(),
		field.String("user_id").MaxLen(64).NotEmpty().Immutable(),
		field.Enum("status").GoType(enums.UserCouponStatus("")).Default(string(enums.CouponAvailable)),
		field.Time("valid_from").Immutable(),
		field.Time("valid_until").Immutable(),
		// The order that holds it (LOCKED) or used it (USED).
		field.String("order_sn").MaxLen(32).Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (UserCoupon) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "status", "id"),
		index.Fields("coupon_id", "status"),
		index.Fields("order_sn"),
	}
}
