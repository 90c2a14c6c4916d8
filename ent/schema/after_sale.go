package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// AfterSale is a buyer's request for a refund or a return of some of an
// order's units (issue 43, LikeShop's ls_after_sale). Its status moves only
// by CAS on the old status and the version, so each transition happens
// once and only its winner moves money or stock. Written by
// internal/aftersale only.
type AfterSale struct{ ent.Schema }

func (AfterSale) Annotations() []schema.Annotation {
	return table("after_sale")
}

func (AfterSale) Fields() []ent.Field {
	return []ent.Field{
		id(),
		// Random like an order number: the ledger's business key of its
		// restores and the stem of its refunds' numbers.
		field.String("after_sale_sn").MaxLen(32).NotEmpty().Immutable(),
		field.Int64("order_id").Immutable(),
		field.String("order_sn").MaxLen(32).Immutable(),
		field.String("user_id").MaxLen(64).Immutable(),
		field.Enum("type").GoType(enums.AfterSaleType("")).Immutable(),
		field.Enum("status").GoType(enums.AfterSaleStatus("")),
		// What is refunded: the lines' amounts plus the shipping fee when
		// this after-sale refunds the whole order before anything shipped.
		field.Int64("amount").GoType(money.Money(0)).Immutable(),
		field.Int64("shipping_fee").GoType(money.Money(0)).Default(0).Immutable(),
		// refundOrder's whole-order refund: every unit it holds had not
		// shipped (reconcile checks it).
		field.Bool("whole").Default(false).Immutable(),
		field.String("currency").MaxLen(3).Immutable(),
		field.String("reason").MaxLen(255).Immutable(),
		field.String("reject_reason").MaxLen(255).Default(""),
		field.String("return_carrier").MaxLen(255).Default(""),
		field.String("return_tracking_no").MaxLen(255).Default(""),
		version(),
		createdAt(),
		field.Time("updated_at").SchemaType(datetime).Default(time.Now),
	}
}

func (AfterSale) Edges() []ent.Edge {
	return []ent.Edge{edge.To("lines", AfterSaleLine.Type)}
}

func (AfterSale) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("after_sale_sn").Unique(),
		index.Fields("order_id"),
		// The admin queue: a status filter in the list's order.
		index.Fields("status", "id"),
	}
}

// AfterSaleLine is the units of one order line an after-sale covers and
// what they refund. Withheld is how many of them had not shipped when it
// was requested (a refund only): they never ship, and their stock goes
// back when the refund is confirmed.
type AfterSaleLine struct{ ent.Schema }

func (AfterSaleLine) Annotations() []schema.Annotation {
	return table("after_sale_line")
}

func (AfterSaleLine) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("after_sale_id").Immutable(),
		field.Int64("order_line_id").Immutable(),
		field.Int64("item_id").Immutable(),
		field.Int64("goods_id").Immutable(),
		field.Int64("pool_id").Default(0).Immutable(),
		field.Int64("quantity").Immutable(),
		field.Int64("withheld").Default(0).Immutable(),
		field.Int64("amount").GoType(money.Money(0)).Immutable(),
	}
}

func (AfterSaleLine) Edges() []ent.Edge {
	return []ent.Edge{
		edge.From("after_sale", AfterSale.Type).Ref("lines").Field("after_sale_id").Unique().Required().Immutable(),
	}
}

func (AfterSaleLine) Indexes() []ent.Index {
	return []ent.Index{index.Fields("after_sale_id")}
}

// AfterSaleLog is one transition of an after-sale: who, when, from, to and
// why. Written in the transition's own transaction, so it exists if and
// only if the transition happened.
type AfterSaleLog struct{ ent.Schema }

func (AfterSaleLog) Annotations() []schema.Annotation {
	return table("after_sale_log")
}

func (AfterSaleLog) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("after_sale_id").Immutable(),
		field.String("actor").MaxLen(128).Immutable(),
		// "" for the request that created it.
		field.String("from_status").MaxLen(16).Immutable(),
		field.String("to_status").MaxLen(16).Immutable(),
		field.String("note").MaxLen(255).Default("").Immutable(),
		createdAt(),
	}
}

func (AfterSaleLog) Indexes() []ent.Index {
	return []ent.Index{index.Fields("after_sale_id", "id")}
}
