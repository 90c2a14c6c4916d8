package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// WebhookDelivery is one attempt to deliver one event to one webhook, or
// (events > 1) the first attempt of every event of one outbox row: a
// group-commit batch's row carries N orders' events, and one row here per
// event (an INSERT with its bytes, two UPDATEs) cost the hot SKU's orders/s
// about as much as the orders' own rows (docs/benchmarks.md, issue 29).
// Such a row refers to its outbox row (outbox_id) for the events' bytes,
// and its event_id is the outbox row's own (no event's); an event whose
// attempt did not end as the row's did (failed, or another 2xx) gets a row
// of its own for attempt 1, listed in split, and the retries are rows of
// their own as for any event.
//
// The first attempt is written when the event is dispatched; a failed
// attempt writes the next one (status PENDING, due at next_attempt_at)
// until the retry schedule is spent. A sender claims a due row (status
// SENDING, claimed_until) so two instances never send the same attempt at
// once.
type WebhookDelivery struct{ ent.Schema }

func (WebhookDelivery) Annotations() []schema.Annotation {
	return table("webhook_delivery")
}

func (WebhookDelivery) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("webhook_id").Immutable(),
		field.String("event_id").MaxLen(36).Immutable(),
		field.String("event_type").MaxLen(64).Immutable(),
		// The CloudEvent as it is POSTed (every attempt sends the same bytes);
		// empty on a row of several events (they are in the outbox row).
		field.Text("body").Immutable(),
		// The outbox row whose events a row of several is the first attempt of.
		field.Int64("outbox_id").Optional().Nillable().Immutable(),
		// How many events the row is the attempt of (1: event_id's).
		field.Int("events").Default(1).Positive().Immutable(),
		// A row of several: the indexes (0-based, ascending, comma-separated)
		// of its events whose first attempt is recorded in a row of its own.
		field.Text("split").Optional(),
		field.Int("attempt").Positive().Immutable(),
		// PENDING, SENDING, DELIVERED or FAILED.
		field.String("status").MaxLen(16),
		field.Int("http_status").Optional().Nillable(),
		field.String("error").MaxLen(512).Default(""),
		field.Time("due_at").SchemaType(datetime),
		field.Time("at").SchemaType(datetime).Optional().Nillable(), // when the attempt ended
		// After a FAILED attempt: when the next one is due (none: given up).
		field.Time("next_attempt_at").SchemaType(datetime).Optional().Nillable(),
		field.String("claim").MaxLen(32).Optional().Nillable(),
		field.Time("claimed_until").SchemaType(datetime).Optional().Nillable(),
		// The claimer's instance id (--instance-id): a restarted instance
		// puts back the attempts its previous life had claimed at once
		// instead of leaving them to their lease.
		field.String("claimed_by").MaxLen(128).Optional().Nillable(),
		createdAt(),
	}
}

func (WebhookDelivery) Indexes() []ent.Index {
	return []ent.Index{
		// A re-dispatched event (at least once) does not queue it twice.
		index.Fields("webhook_id", "event_id", "attempt").Unique(),
		index.Fields("webhook_id", "status", "due_at"),
	}
}
