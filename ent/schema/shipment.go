package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Shipment is one parcel of an order (seed 003's ls_delivery): a carrier,
// a tracking number and the units of each line it carries. Written by
// internal/checkout in the transaction that moves the order to
// PARTIALLY_SHIPPED or SHIPPED and adds the units to its lines'
// shipped_quantity.
type Shipment struct{ ent.Schema }

func (Shipment) Annotations() []schema.Annotation {
	return table("shipment")
}

// ShipmentLine is one line of a shipment as stored.
type ShipmentLine struct {
	ItemID   int64 `json:"itemId"`
	Quantity int64 `json:"quantity"`
}

func (Shipment) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("order_id").Immutable(),
		field.String("carrier").MaxLen(255).Immutable(),
		field.String("tracking_no").MaxLen(255).Immutable(),
		field.JSON("lines", []ShipmentLine{}).Immutable(),
		field.Time("shipped_at").SchemaType(datetime).Default(time.Now).Immutable(),
	}
}

func (Shipment) Indexes() []ent.Index {
	return []ent.Index{index.Fields("order_id", "id")}
}
