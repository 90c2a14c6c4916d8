package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// ShippingTemplate is a freight template (运费模板, seed 003's ls_freight
// with its ls_freight_config rows): how goods that name it are charged for
// shipping, per region. Written by internal/shipping only. The rules are
// one JSON document: a template is read and written whole, and its rules
// are few.
type ShippingTemplate struct{ ent.Schema }

func (ShippingTemplate) Annotations() []schema.Annotation {
	return table("shipping_template")
}

// TemplateRule is one rule of a template as stored (internal/shipping.Rule).
type TemplateRule struct {
	RegionCodes []string    `json:"regionCodes"`
	FirstUnits  int64       `json:"firstUnits"`
	FirstFee    money.Money `json:"firstFee"`
	NextUnits   int64       `json:"nextUnits"`
	NextFee     money.Money `json:"nextFee"`
}

func (ShippingTemplate) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.String("name").MaxLen(255),
		field.Enum("charge_by").GoType(enums.ChargeBy("")),
		field.JSON("rules", []TemplateRule{}),
		// NULL: never free; otherwise the subtotal of the template's lines
		// from which they ship free.
		field.Int64("free_over").GoType(money.Money(0)).Optional().Nillable(),
		version(),
		createdAt(),
		field.Time("updated_at").SchemaType(datetime).Default(time.Now),
	}
}
