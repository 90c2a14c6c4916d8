package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
)

// PoolBuyer counts one buyer's units from one stock pool over their orders
// that are not closed: the per-buyer limit is a CAS on this row in the
// order's transaction (units + n <= the pool's limit), so a buyer firing
// many requests at once gets at most the limit. A close gives the units back.
type PoolBuyer struct{ ent.Schema }

func (PoolBuyer) Annotations() []schema.Annotation {
	return table("pool_buyer")
}

func (PoolBuyer) Fields() []ent.Field {
	return buyerCounter("pool_id")
}

func (PoolBuyer) Indexes() []ent.Index {
	return buyerCounterIndex("pool_id")
}
