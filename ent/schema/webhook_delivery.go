package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookDelivery is one attempt to deliver one event to one webhook. The
// first attempt is written when the event is dispatched; a failed attempt
// writes the next one (status PENDING, due at next_attempt_at) until the
// retry schedule is spent. A sender claims a due attempt (status SENDING,
// claimed_until) so two instances never send the same attempt at once.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("webhook_delivery")}
}

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("webhook_id").Immutable(),
		field.String("event_id").MaxLen(36).Immutable(),
		field.String("event_type").MaxLen(64).Immutable(),
		// The CloudEvent as it is POSTed (every attempt sends the same bytes).
		field.Text("body").Immutable(),
		field.Int("attempt").Positive().Immutable(),
		// PENDING, SENDING, DELIVERED or FAILED.
		field.String("status").MaxLen(16),
		field.Int("http_status").Optional().Nillable(),
		field.String("error").MaxLen(512).Default(""),
		field.Time("due_at"),
		field.Time("at").Optional().Nillable(), // when the attempt ended
		// After a FAILED attempt: when the next one is due (none: given up).
		field.Time("next_attempt_at").Optional().Nillable(),
		field.String("claim").MaxLen(32).Optional().Nillable(),
		field.Time("claimed_until").Optional().Nillable(),
		field.Time("created_at").Default(time.Now).Immutable(),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		// A re-dispatched event (at least once) does not queue it twice.
		index.Fields("webhook_id", "event_id", "attempt").Unique(),
		index.Fields("webhook_id", "status", "due_at"),
	}
}
