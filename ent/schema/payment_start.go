package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/money"
)

// PaymentStart records that a buyer started paying an order at a provider
// (startPayment): the timeout closer asks that provider about the order
// before it closes it, so a payment whose notification was lost does not
// lose the buyer's order. One row per (provider, order); starting again
// updates it. Written by payments only.
type PaymentStart struct{ ent.Schema }

func (PaymentStart) Annotations() []schema.Annotation {
	return table("payment_start")
}

func (PaymentStart) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("provider").MaxLen(32).Immutable(),
		field.Int64("order_id").Immutable(),
		field.String("order_sn").MaxLen(32).Immutable(),
		// The number the provider knows the payment by before it is paid
		// (WeChat Pay's and Alipay's out_trade_no: the order number).
		field.String("out_trade_no").MaxLen(64),
		// The provider's own object, where it has one before payment (a
		// Stripe PaymentIntent id); "" until its answer arrived.
		field.String("provider_ref").MaxLen(255).Default(""),
		field.Int64("amount").GoType(money.Money(0)),
		field.String("currency").MaxLen(3),
		// The order's expiry, which bounds the payment's.
		field.Time("expires_at").SchemaType(datetime),
		createdAt(),
		updatedAt(),
	}
}

func (PaymentStart) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "order_id").Unique(),
		index.Fields("order_id"),
	}
}
