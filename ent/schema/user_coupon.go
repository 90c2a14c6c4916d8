package schema

import (
	"entgo.io/ent"
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
	return table("user_coupon")
}

func (UserCoupon) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("coupon_id").Immutable(),
		owner(),
		field.Enum("status").GoType(enums.UserCouponStatus("")).Default(string(enums.CouponAvailable)),
		field.Time("valid_from").SchemaType(datetime).Immutable(),
		field.Time("valid_until").SchemaType(datetime).Immutable(),
		// The order that holds it (LOCKED) or used it (USED).
		field.String("order_sn").MaxLen(32).Optional().Nillable(),
		createdAt(),
	}
}

func (UserCoupon) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("user_id", "status", "id"),
		index.Fields("coupon_id", "status"),
		index.Fields("order_sn"),
	}
}
