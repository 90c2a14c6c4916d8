package schema

import (
	"time"

	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// Address is one entry of a customer's address book (written by
// internal/shipping only). An order copies the address it ships to
// (orders.shipping_address), so removing an entry deletes its row and no
// order loses anything.
type Address struct{ ent.Schema }

func (Address) Annotations() []schema.Annotation {
	return table("address")
}

func (Address) Fields() []ent.Field {
	return []ent.Field{
		id(),
		owner(),
		field.String("name").MaxLen(255),
		field.String("phone").MaxLen(32),
		// GB/T 2260 code of the district: 2 digits province, 4 city, 6 district.
		field.String("region_code").MaxLen(6),
		field.String("province").MaxLen(255),
		field.String("city").MaxLen(255),
		field.String("district").MaxLen(255),
		field.String("line").MaxLen(1024),
		field.String("postal_code").MaxLen(16).Default(""),
		createdAt(),
		field.Time("updated_at").SchemaType(datetime).Default(time.Now),
	}
}

func (Address) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id", "id")}
}
