package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// OrderAdjustment is one line's share of one adjustment of an order's money
// (internal/pricing): a coupon's discount, the shipping fee, and the kinds
// to come. An adjustment is its rows of one (kind, source_id); its amount is
// their sum, and subtotal + Σ amount = the order's amount. Refunds take a
// line's share of every discount from here. Written by checkout only, when
// the order is placed (and its shipping rows again when an UNPAID order
// takes an address); a row with a zero share is not written.
type OrderAdjustment struct{ ent.Schema }

func (OrderAdjustment) Annotations() []schema.Annotation {
	return table("order_adjustment")
}

func (OrderAdjustment) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("order_id"),
		// The line's SKU (an order has one line per SKU).
		field.Int64("item_id"),
		// A string, not an ENUM column: a new kind is its definition in
		// checkout, with no migration of this table.
		field.String("kind").GoType(enums.AdjustmentKind("")).MaxLen(16),
		// What gave it: the customer's coupon for COUPON; 0 for none.
		field.Int64("source_id").Default(0),
		field.String("label").MaxLen(120).Default(""),
		// Signed: negative for a discount, positive for a fee.
		field.Int64("amount").GoType(money.Money(0)),
	}
}

func (OrderAdjustment) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("order", Order.Type).Ref("adjustments").Field("order_id").Unique().Required(),
	}
}

// One share per line of each adjustment; order_id first, the index every
// read of an order's adjustments takes.
func (OrderAdjustment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("order_id", "kind", "source_id", "item_id").Unique()}
}
