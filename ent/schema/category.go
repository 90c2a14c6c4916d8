package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Category is a node of the catalog's category tree (at most 5 levels).
// Written by catalog only; listing reads it to know a goods' ancestors.
type Category struct{ ent.Schema }

func (Category) Annotations() []schema.Annotation {
	return table("category")
}

func (Category) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("name").MaxLen(60).NotEmpty(),
		field.String("slug").MaxLen(120).NotEmpty(),
		// NULL for a root. A plain column: cycles are refused by catalog.
		field.Int64("parent_id").Optional().Nillable(),
		createdAt(),
	}
}

func (Category) Indexes() []ent.Index {
	return []ent.Index{index.Fields("slug").Unique(), index.Fields("parent_id")}
}
