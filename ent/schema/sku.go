package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect/entsql"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Sku is one sellable combination of spec values (seed table ls_goods_item).
// Orders and the ledger point at its id forever: it is disabled, never deleted.
//
// One row, two aggregates with a writer and a version each (docs/checkout.md,
// "Terms and stock"): catalog writes the terms (prices, code, status, spec
// text) and moves version; inventory writes stock, lock_stock and volume and
// moves stock_version. Neither writes the other's columns.
type Sku struct{ ent.Schema }

func (Sku) Annotations() []schema.Annotation {
	return table("sku")
}

func (Sku) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("goods_id"),
		// Display order (dimension order), kept for compatibility; never a business key.
		field.String("spec_value_ids").MaxLen(255).Default(""),
		field.String("spec_value_str").MaxLen(255).Default(""),
		// Value ids sorted ascending: the business key, unique per goods, so
		// "red/L" and "L/red" can only ever be one row.
		field.String("spec_key").MaxLen(255).Default(""),
		// NULL when not set: an empty string would take part in the unique index
		// and allow only one SKU without a code (seed 003, 3.4).
		field.String("sku_code").MaxLen(64).Optional().Nillable(),
		field.Int64("sell_price").GoType(money.Money(0)).Default(0),
		field.Int64("lineation_price").GoType(money.Money(0)).Default(0),
		field.Int64("cost_price").GoType(money.Money(0)).Default(0),
		// Signed on purpose: "cannot deduct" must show as 0 affected rows of the
		// CAS, and a negative balance must be recordable and alertable.
		field.Int64("stock").Default(0),
		field.Int64("lock_stock").Default(0),
		// The terms' version: moved only by catalog edits of this SKU (price,
		// code, status, spec text), compared by updateSku. A sale never moves
		// it, so selling never refuses an admin's edit.
		version(),
		// The stock's version: moved by every change of stock or lock_stock
		// (inventory), compared by setStock. An edit of the terms never moves
		// it, so editing never refuses a stock change. Databases made before
		// it existed start it at the SKU's version (store.Migrate): the
		// column's DEFAULT 0 marks a row not yet copied, a new SKU starts at 1.
		field.Int64("stock_version").Default(1).Annotations(entsql.Default("0")),
		field.Int64("volume").Default(0),
		field.Enum("status").GoType(enums.SkuStatus("")).Default(string(enums.SkuEnabled)),
		// One unit's shipping weight, a term like the prices: a WEIGHT
		// freight template charges by it (internal/shipping).
		field.Int64("weight_grams").Default(0),
		createdAt(),
		updatedAt(),
	}
}

func (Sku) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("goods", Goods.Type).Ref("skus").Field("goods_id").Unique().Required(),
	}
}

// No index on stock: it is the hottest updated column and `stock > 0` does not
// select (seed 003, 3.5).
func (Sku) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("goods_id", "spec_key").Unique(),
		index.Fields("sku_code").Unique(),
		index.Fields("goods_id", "status"),
	}
}
