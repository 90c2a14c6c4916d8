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
	}
}

func (Outbox) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("event_id").Unique(),
		index.Fields("dispatched_at", "id"),
	}
}
