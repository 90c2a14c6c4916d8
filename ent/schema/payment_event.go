package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PaymentEvent records a processed provider notification: a repeat of the
// same event id is acknowledged without running any side effect again.
type PaymentEvent struct{ ent.Schema }

func (PaymentEvent) Annotations() []schema.Annotation {
	return table("payment_event")
}

func (PaymentEvent) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("provider").MaxLen(32),
		field.String("event_id").MaxLen(64),
		field.Int64("payment_ref").Optional().Nillable(),
		// SHA-256 of the raw body, for audits of what was received.
		field.String("payload_digest").MaxLen(64),
		field.Time("processed_at").SchemaType(datetime).Default(time.Now),
	}
}

func (PaymentEvent) Indexes() []ent.Index {
	return []ent.Index{index.Fields("provider", "event_id").Unique()}
}
