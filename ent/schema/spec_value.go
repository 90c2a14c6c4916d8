package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// SpecValue is one value of a dimension (黑色, L). Its id is part of every
// spec key that uses it, so it is never deleted and never reused: a reused id
// would send an old order's refund into a new SKU's stock (seed 003, 4.4).
type SpecValue struct{ ent.Schema }

func (SpecValue) Annotations() []schema.Annotation {
	return table("spec_value")
}

func (SpecValue) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("spec_id"),
		// Denormalised so a product page loads all values of a goods in one query.
		field.Int64("goods_id"),
		field.String("name").MaxLen(64).NotEmpty(),
		field.Int("sort").Default(0),
		field.Bool("disabled").Default(false),
	}
}

func (SpecValue) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("spec", Spec.Type).Ref("values").Field("spec_id").Unique().Required(),
	}
}

func (SpecValue) Indexes() []ent.Index {
	return []ent.Index{index.Fields("goods_id"), index.Fields("spec_id")}
}
