package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/money"
)

// StockPool is a flash sale's own stock (seed 003, 5.5): units moved out of
// one SKU's main stock through the ledger (change type 7) and sold from this
// row, so a flash sale never queues on the SKU's row lock. Its stock is the
// sum of the ledger rows that carry its id; what is left at the end goes
// back to main stock once (change type 8, guarded by returned).
type StockPool struct{ ent.Schema }

func (StockPool) Annotations() []schema.Annotation {
	return table("stock_pool")
}

func (StockPool) Fields() []ent.Field {
	return []ent.Field{
		id(),
		// Plain columns, like stock_log's: the pool is written by inventory
		// with conditional UPDATEs, never through an edge.
		field.Int64("item_id"),
		field.Int64("goods_id"),
		field.String("name").MaxLen(120),
		field.Int64("price").GoType(money.Money(0)),
		// Units moved in when the pool was created.
		field.Int64("quantity"),
		// Units on hand in the pool; signed for the same reason as
		// sku.stock. The ledger rows carrying the pool's id sum to it.
		field.Int64("stock"),
		// Held by unpaid orders of a lock-at-order goods, as sku.lock_stock:
		// still in stock (no ledger row), not available (stock - lock_stock).
		// They stay in the pool after its return until paid or released.
		field.Int64("lock_stock").Default(0),
		field.Int64("per_buyer_limit").Default(1),
		// Inventory bounds them to MinPoolTime..MaxPoolTime.
		field.Time("starts_at").SchemaType(datetime),
		field.Time("ends_at").SchemaType(datetime),
		// Set once by closeStockPool; a pool past ends_at is ended whether
		// or not it is set.
		field.Time("closed_at").SchemaType(datetime).Optional().Nillable(),
		// The remainder went back to main stock: flipped once by CAS, so two
		// closers cannot both return it.
		field.Bool("returned").Default(false),
		version(),
		createdAt(),
	}
}

// item_id, ends_at: a SKU's pools and its active one; goods_id, ends_at: a
// product page's active pools; returned, ends_at: the closer's scan for
// pools to return.
func (StockPool) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("item_id", "ends_at"),
		index.Fields("goods_id", "ends_at"),
		index.Fields("returned", "ends_at"),
	}
}
