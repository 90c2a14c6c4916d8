package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/media"
)

// Goods is the SPU (seed table ls_goods): what is shown; trade happens on its SKUs.
type Goods struct{ ent.Schema }

func (Goods) Annotations() []schema.Annotation {
	return table("goods")
}

func (Goods) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("name").MaxLen(120).NotEmpty(),
		field.String("code").MaxLen(64).Default(""),
		field.Enum("spec_type").GoType(enums.SpecType("")).Default(string(enums.SpecSingle)),
		field.Enum("status").GoType(enums.GoodsStatus("")).Default(string(enums.GoodsOffShelf)),
		// When orders take stock; a switch applies to orders placed afterwards.
		field.Enum("stock_mode").GoType(enums.StockMode("")).Default(string(enums.DeductAtOrder)),
		// Bumped by every catalog edit of this goods; the product-view cache is keyed by it.
		version(),
		createdAt(),
		updatedAt(),
		// Product-page content (issue 19). The slug is NULL only between the
		// insert and the update that names it goods-<id>, and on rows written
		// before slugs existed (storefront migrate fills those).
		field.Text("description").Default(""),
		field.JSON("images", []media.Image{}).Optional(),
		field.String("slug").MaxLen(120).Optional().Nillable(),
		// A plain column, no edge: catalog writes it, listing reads it.
		field.Int64("category_id").Optional().Nillable(),
		// The units one customer may hold in orders that stand (NULL: no
		// limit): purchase_count's limit.
		field.Int64("purchase_limit").Optional().Nillable(),
		// The freight template its orders are charged by (internal/shipping);
		// NULL: it ships free. A plain column like category_id: catalog
		// writes it, checkout and shipping read it.
		field.Int64("shipping_template_id").Optional().Nillable(),
	}
}

func (Goods) Edges() []ent.Edge {
	return []ent.Edge{
		edge.To("specs", Spec.Type),
		edge.To("skus", Sku.Type),
	}
}

func (Goods) Indexes() []ent.Index {
	return []ent.Index{index.Fields("status"), index.Fields("slug").Unique(), index.Fields("category_id")}
}
