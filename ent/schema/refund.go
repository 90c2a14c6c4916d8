package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Refund is one refund sent to a provider. Its refund_no is the idempotency
// key the provider sees (WeChat Pay's out_refund_no, Alipay's
// out_request_no, Stripe's Idempotency-Key): every send of one refund
// carries it, so a send whose answer was lost is sent again, never
// duplicated. PENDING until the provider confirms (SUCCEEDED: the order is
// refunded and its stock restored, once) or refuses (FAILED: the order stays
// PAID). Written by payments only.
type Refund struct{ ent.Schema }

func (Refund) Annotations() []schema.Annotation {
	return table("refund")
}

func (Refund) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("refund_no").MaxLen(64).NotEmpty().Immutable(),
		field.Int64("order_id").Immutable(),
		field.String("order_sn").MaxLen(32).Immutable(),
		// payment.id of the payment refunded.
		field.Int64("payment_ref").Immutable(),
		field.String("provider").MaxLen(32).Immutable(),
		field.Int64("amount").GoType(money.Money(0)).Immutable(),
		field.String("currency").MaxLen(3).Immutable(),
		field.String("reason").MaxLen(255).Immutable(),
		field.Enum("status").GoType(enums.RefundStatus("")),
		// The provider's last word on it (an answer to a send or a
		// notification), recorded before anything acts on it: reconcile
		// finds a refund the provider confirmed that this shop did not book.
		field.Enum("provider_status").GoType(enums.RefundStatus("")).Optional().Nillable(),
		// The provider's id of the refund, once it answered.
		field.String("provider_refund_id").MaxLen(255).Default(""),
		// Why the provider refused it (FAILED), or the last send's error.
		field.String("failure").MaxLen(512).Default(""),
		field.Int("attempts").Default(0),
		// A PENDING refund is (re)sent at or after this time; a sender
		// claims it by moving it forward (a lease), so two instances never
		// send it at once.
		field.Time("next_attempt_at").SchemaType(datetime),
		createdAt(),
		updatedAt(),
		field.Time("settled_at").SchemaType(datetime).Optional().Nillable(),
		// The after-sale this refund pays (issue 43); its refund_no is the
		// after-sale's number and the count of its refused refunds, plus one.
		field.Int64("after_sale_id").Optional().Nillable().Immutable(),
	}
}

func (Refund) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("refund_no").Unique(),
		index.Fields("order_id"),
		// The sweeper's scan: PENDING refunds due for a send.
		index.Fields("status", "next_attempt_at"),
	}
}
