package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
)

// PurchaseCount counts one customer's units of one goods in orders that
// stand (not closed or refunded): a guarded counter
// (internal/inventory/counter.go) whose limit is the goods' purchase_limit,
// added to in the order's transaction after its stock and given back once
// when the order closes or is refunded.
type PurchaseCount struct{ ent.Schema }

func (PurchaseCount) Annotations() []schema.Annotation {
	return table("purchase_count")
}

func (PurchaseCount) Fields() []ent.Field {
	return buyerCounter("goods_id")
}

func (PurchaseCount) Indexes() []ent.Index {
	return buyerCounterIndex("goods_id")
}
