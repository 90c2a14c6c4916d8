package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Idempotency is a claimed Idempotency-Key of one user. The claim is a row
// with a lease (a concurrent duplicate sees it at once, no row-lock wait);
// the finished response is written in the same transaction as the order.
type Idempotency struct{ ent.Schema }

func (Idempotency) Annotations() []schema.Annotation {
	return table("idempotency_key")
}

func (Idempotency) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("user_id").MaxLen(64),
		field.String("key").MaxLen(255),
		// SHA-256 of the canonical request: the same key with another input is refused.
		field.String("request_hash").MaxLen(64),
		// PENDING while claimed, DONE with a response.
		field.String("state").MaxLen(16),
		field.Time("lease_until").SchemaType(datetime),
		field.String("order_sn").MaxLen(32).Optional().Nillable(),
		createdAt(),
		field.Time("expires_at").SchemaType(datetime),
	}
}

func (Idempotency) Indexes() []ent.Index {
	return []ent.Index{
		// Named: checkout tells an existing key from other duplicates by it.
		index.Fields("user_id", "key").Unique().StorageKey("idempotency_user_id_key"),
		index.Fields("expires_at"),
	}
}
