package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Coupon is a promotion customers claim (user_coupon) and use on one order
// each. claimed is a CAS counter (claimed < total_quantity) in the claim's
// transaction, so no interleaving claims more than total_quantity; used
// counts the user coupons their orders paid with.
type Coupon struct{ ent.Schema }

func (Coupon) Annotations() []schema.Annotation {
	return table("coupon")
}

func (Coupon) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("name").MaxLen(120).NotEmpty(),
		field.Enum("kind").GoType(enums.CouponKind("")),
		field.Int64("amount_off").GoType(money.Money(0)).Default(0),
		field.Int("percent_off").Default(0),
		// 0: no cap.
		field.Int64("max_discount").GoType(money.Money(0)).Default(0),
		field.Int64("min_subtotal").GoType(money.Money(0)).Default(0),
		// The goods it applies to; empty: every goods.
		field.JSON("goods_ids", []int64{}).Optional(),
		// NULL: unlimited.
		field.Int64("total_quantity").Optional().Nillable(),
		field.Int64("per_customer_limit").Default(1),
		field.Time("claim_starts_at").SchemaType(datetime).Optional().Nillable(),
		field.Time("claim_ends_at").SchemaType(datetime).Optional().Nillable(),
		field.Int("valid_days"),
		field.String("code").MaxLen(64).Optional().Nillable(),
		field.Time("stopped_at").SchemaType(datetime).Optional().Nillable(),
		field.Int64("claimed").Default(0),
		field.Int64("used").Default(0),
		createdAt(),
	}
}

func (Coupon) Indexes() []ent.Index {
	return []ent.Index{index.Fields("code").Unique()}
}
