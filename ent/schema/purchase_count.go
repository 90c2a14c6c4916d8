package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// PurchaseCount counts one customer's units of one goods in orders that
// stand (not closed or refunded): a guarded counter
// (internal/inventory/counter.go) whose limit is the goods' purchase_limit,
// added to in the order's transaction after its stock and given back once
// when the order closes or is refunded.
type PurchaseCount struct{ ent.Schema }

func (PurchaseCount) Annotations() []schema.Annotation {
	return []schema.Annotation{entsql.Table("purchase_count")}
}

func (PurchaseCount) Fields() []ent.Field {
	return []ent.Field{
		field.Int64("id"),
		field.Int64("goods_id"),
		field.String("user_id").MaxLen(64),
		field.Int64("units").Default(0),
	}
}

func (PurchaseCount) Indexes() []ent.Index {
	return []ent.Index{index.Fields("goods_id", "user_id").Unique()}
}
