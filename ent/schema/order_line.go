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

// OrderLine snapshots what was bought: later renames and price edits of the
// catalog never change an order's history.
type OrderLine struct{ ent.Schema }

func (OrderLine) Annotations() []schema.Annotation {
	return table("order_line")
}

func (OrderLine) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("order_id"),
		field.Int64("item_id"),
		field.Int64("goods_id"),
		field.String("goods_name").MaxLen(120),
		field.String("spec_value_str").MaxLen(255).Default(""),
		field.Int64("unit_price").GoType(money.Money(0)),
		field.Int64("quantity"),
		// The goods' stock mode when the order was placed: the line's later
		// transitions follow it, whatever the goods' mode is by then.
		field.Enum("stock_mode").GoType(enums.StockMode("")).Default(string(enums.DeductAtOrder)),
		// Lock-at-order lines: LOCKED → DEDUCTED | RELEASED, each once (by CAS).
		field.String("lock_state").MaxLen(16).Default(""),
		// 0: sold from the SKU's main stock; otherwise the stock pool the
		// line was sold from (and, before the pool ends, restored to).
		field.Int64("pool_id").Default(0),
		// The line's share of the order's discount (internal/pricing).
		field.Int64("discount").GoType(money.Money(0)).Default(0),
		// Whether the line's units were added to its goods' purchase_count
		// (the goods had a purchase limit): the close gives back exactly
		// those.
		field.Bool("purchase_counted").Default(false),
		// Units shipped so far: raised only by a CAS that keeps it at most
		// quantity (internal/checkout/ship.go).
		field.Int64("shipped_quantity").Default(0),
		// Units in open or finished after-sales (issue 43) and the money they
		// hold: raised by a CAS that keeps the units at most quantity, given
		// back by a rejected or cancelled request. withheld_quantity is those
		// of them that had not shipped (a refund only): a shipment's CAS
		// keeps shipped + withheld at most quantity.
		field.Int64("after_sale_quantity").Default(0),
		field.Int64("after_sale_amount").GoType(money.Money(0)).Default(0),
		field.Int64("withheld_quantity").Default(0),
	}
}

func (OrderLine) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("order", Order.Type).Ref("lines").Field("order_id").Unique().Required(),
	}
}

// No index on item_id: nothing reads lines by SKU, and on a hot SKU every
// index is one more B-tree insert per order.
func (OrderLine) Indexes() []ent.Index {
	return []ent.Index{index.Fields("order_id")}
}
