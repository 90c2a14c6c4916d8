package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Outbox holds domain events written in the same transaction as the change
// they announce, dispatched after commit (at least once, seed 003, 7.2).
//
// A row holds one event, or (events > 1) the events of one type that one
// group-commit batch raised: then payload is a JSON array of {eventId,
// payload}, aggregate_id is empty and the dispatcher hands out each event on
// its own, with its own id and its order's id as aggregate. A row per event
// cost the hot SKU's batch about a tenth of its database CPU per order
// (docs/checkout.md).
//
// Dispatchers on several instances claim rows before they send them
// (claim, claimed_until): each row goes to the sinks from one instance at
// a time.
type Outbox struct{ ent.Schema }

func (Outbox) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("outbox")}
}

func (Outbox) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.String("event_id").MaxLen(36).Immutable(),
		field.String("type").MaxLen(64),
		field.String("aggregate_id").MaxLen(64),
		field.Text("payload"),
		field.Time("created_at").Default(time.Now).Immutable(),
		field.Time("dispatched_at").Optional().Nillable(),
		field.Int("events").Default(1).Positive().Immutable(),
		// A dispatcher claims a row before it sends it (checkout/claim.go):
		// claim is its pass's token, claimed_until when the claim lapses
		// (a dispatcher that died), so instances never send the same rows.
		field.String("claim").MaxLen(32).Optional().Nillable(),
		field.Time("claimed_until").Optional().Nillable(),
	}
}

func (Outbox) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("event_id").Unique(),
		index.Fields("dispatched_at", "id"),
	}
}
