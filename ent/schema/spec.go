package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Spec is a dimension of a goods (colour, size). Removed dimensions are
// disabled, never deleted, so SKU history keeps resolving.
type Spec struct{ ent.Schema }

func (Spec) Annotations() []schema.Annotation {
	return table("spec")
}

func (Spec) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("goods_id"),
		field.String("name").MaxLen(64).NotEmpty(),
		field.Int("sort").Default(0),
		field.Bool("disabled").Default(false),
	}
}

func (Spec) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("goods", Goods.Type).Ref("specs").Field("goods_id").Unique().Required(),
		edge.To("values", SpecValue.Type),
	}
}

func (Spec) Indexes() []ent.Index {
	return []ent.Index{index.Fields("goods_id")}
}
