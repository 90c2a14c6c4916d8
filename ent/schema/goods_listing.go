package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/dialect"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
)

// GoodsListing is the listing's derived row (docs/listing.md): one per
// (scope, goods), where scope 0 is "all goods" and every other scope is a
// category the goods is in or under. Everything here is recomputable from
// goods, sku and category rows; package listing is its only writer and
// listing.Reconcile compares it with that recomputation. One row per scope
// lets "in this category or below, sorted by X" be one index range read in
// order, for every X.
type GoodsListing struct{ ent.Schema }

func (GoodsListing) Annotations() []schema.Annotation {
	return table("goods_listing")
}

// binary makes MariaDB and PostgreSQL compare the keys byte by byte, as
// SQLite does: one order on every backend, and LIKE on keys that are
// already lowercased. (PostgreSQL's ucs_basic orders by code point,
// which is UTF-8's byte order, as utf8mb4_bin's is.)
var binary = map[string]string{
	dialect.MySQL:    "varchar(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin",
	dialect.Postgres: "varchar(255) COLLATE ucs_basic",
}

func (GoodsListing) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("scope"),
		field.Int64("goods_id"),
		field.Enum("status").GoType(enums.GoodsStatus("")),
		// Lowercased name (the NAME sort) and lowercased name and code
		// joined by a unit separator (the search).
		field.String("name_key").MaxLen(255).SchemaType(binary),
		field.String("search_key").MaxLen(255).SchemaType(binary),
		// Lowest enabled SKU price; listing.NoPrice when none is enabled.
		field.Int64("min_price"),
		// Units sold over all the goods' SKUs (sum of sku.volume).
		field.Int64("sales"),
		// Some enabled SKU has stock - lock_stock > 0.
		field.Bool("in_stock"),
		field.Time("created_at").SchemaType(datetime),
	}
}

func (GoodsListing) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("scope", "goods_id").Unique(),
		index.Fields("scope", "status", "goods_id"),
		index.Fields("scope", "status", "name_key", "goods_id"),
		index.Fields("scope", "status", "min_price", "goods_id"),
		index.Fields("scope", "status", "created_at", "goods_id"),
		index.Fields("scope", "status", "sales", "goods_id"),
		// The stock flips: only rows that really change are locked.
		index.Fields("goods_id", "in_stock"),
	}
}
