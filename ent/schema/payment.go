package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Payment is one provider payment. (provider, payment_id) is unique: the same
// payment id under two providers is two payments (seed 000).
type Payment struct{ ent.Schema }

func (Payment) Annotations() []schema.Annotation {
	return table("payment")
}

func (Payment) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("order_id"),
		field.String("order_sn").MaxLen(32),
		field.String("provider").MaxLen(32),
		field.String("payment_id").MaxLen(64),
		field.Int64("amount").GoType(money.Money(0)),
		field.String("currency").MaxLen(3),
		field.Enum("status").GoType(enums.PaymentStatus("")),
		version(),
		createdAt(),
		updatedAt(),
		// When the payment was first seen PAID. Set once, by CAS (paid_at IS
		// NULL), by the notification that runs its side effects: paying the
		// order, or flagging money the order did not need. A later SUCCESS for
		// the same payment (a new event id) finds it set and runs nothing again.
		field.Time("paid_at").SchemaType(datetime).Optional().Nillable(),
	}
}

func (Payment) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("provider", "payment_id").Unique(),
		index.Fields("order_id"),
	}
}
