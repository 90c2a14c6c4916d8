package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Outbox holds the events of every domain, each written in the same
// transaction as the change it announces and dispatched after commit (at
// least once, seed 003, 7.2). internal/platform/outbox writes and
// dispatches it; an event is about one aggregate: aggregate_type ("order")
// and aggregate_id (the order's orderSn), the CloudEvent's subject.
//
// A row holds one event, or (events > 1) the events of one type about
// several aggregates of one type that one transaction raised (a
// group-commit batch's orders): then payload is a JSON array of {eventId,
// aggregateId, payload}, aggregate_id is empty and the dispatcher hands out
// each event on its own, with its own id and aggregate. A row per event
// cost the hot SKU's batch about a tenth of its database CPU per order
// (docs/checkout.md).
//
// A row with no aggregate_type was written by a release before aggregate
// types (issue 39): every such row is orders', its aggregate_id the
// order's database id (empty in a batch's row) and its payloads name the
// order by orderSn (platform/outbox/legacy.go).
//
// Each sink keeps its own progress through the outbox, a lane
// (platform/outbox/lanes.go): the broker's (NATS JetStream, or the log) and the
// webhooks'. A lane marks a row done in its own column (broker_at,
// webhooks_at), so a broker that is down, full or missing its stream holds
// up only its own lane; dispatched_at is set when the last lane is done
// (and on rows dispatched before lanes existed, which every lane takes as
// done).
//
// Dispatchers on several instances claim a row's lane before they send it
// (claim, claimed_until, claimed_by for the broker's lane; webhooks_claim,
// webhooks_claimed_until, webhooks_claimed_by for the webhooks'): each
// lane of a row goes to its sink from one instance at a time, and an
// instance that restarts takes back its own claims at once (claimed_by is
// its --instance-id).
type Outbox struct{ ent.Schema }

func (Outbox) Annotations() []schema.Annotation {
	return table("outbox")
}

func (Outbox) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("event_id").MaxLen(36).Immutable(),
		field.String("type").MaxLen(64),
		// What the event is about; "" on rows of older releases (above).
		field.String("aggregate_type").MaxLen(32).Default(""),
		field.String("aggregate_id").MaxLen(64),
		field.Text("payload"),
		createdAt(),
		field.Time("dispatched_at").SchemaType(datetime).Optional().Nillable(),
		field.Int("events").Default(1).Positive().Immutable(),
		// A dispatcher claims a row before it sends it (platform/outbox/lease.go):
		// claim is its pass's token, claimed_until when the claim lapses
		// (a dispatcher that died), so instances never send the same rows.
		field.String("claim").MaxLen(32).Optional().Nillable(),
		field.Time("claimed_until").SchemaType(datetime).Optional().Nillable(),
		// The claimer's instance id (--instance-id): a restarted instance
		// releases what its previous life claimed instead of waiting out
		// the lease.
		field.String("claimed_by").MaxLen(128).Optional().Nillable(),
		// When the broker's lane (the fields above) and the webhooks' lane
		// (its own claim below) were each done with the row.
		field.Time("broker_at").SchemaType(datetime).Optional().Nillable(),
		field.Time("webhooks_at").SchemaType(datetime).Optional().Nillable(),
		field.String("webhooks_claim").MaxLen(32).Optional().Nillable(),
		field.Time("webhooks_claimed_until").SchemaType(datetime).Optional().Nillable(),
		field.String("webhooks_claimed_by").MaxLen(128).Optional().Nillable(),
		// The W3C traceparent of the span that wrote the row (tracing on),
		// so its events' publish and webhook attempts join the change's
		// trace; a batch's row of several events keeps each one's in its
		// payload instead.
		field.String("traceparent").MaxLen(55).Optional().Nillable(),
	}
}

func (Outbox) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("event_id").Unique(),
		// Each lane's claim reads its undone rows in id order: rows done
		// before lanes existed (dispatched_at set) are skipped by the
		// first column, the lane's done rows by the second. They replace
		// the index (dispatched_at, id), which a migrated database keeps
		// until it is dropped by hand (docs/operations.md, "Migrations").
		index.Fields("dispatched_at", "broker_at", "id"),
		index.Fields("dispatched_at", "webhooks_at", "id"),
	}
}
