package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PoolBuyer counts one buyer's units from one stock pool over their orders
// that are not closed: the per-buyer limit is a CAS on this row in the
// order's transaction (units + n <= the pool's limit), so a buyer firing
// many requests at once gets at most the limit. A close gives the units back.
type PoolBuyer struct{ ent.Schema }

func (PoolBuyer) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("pool_buyer")}
}

func (PoolBuyer) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("pool_id"),
		field.String("user_id").MaxLen(64),
		field.Int64("units").Default(0),
	}
}

func (PoolBuyer) Indexes() []ent.Index {
	return []ent.Index{index.Fields("pool_id", "user_id").Unique()}
}
