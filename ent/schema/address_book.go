package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"
)

// AddressBook is one customer's book: how many addresses it holds and
// which one is the default. Every change of a customer's addresses updates
// this row first (a CAS on its count), so concurrent adds cannot pass the
// limit and there is exactly one default whatever races (internal/shipping).
type AddressBook struct{ ent.Schema }

func (AddressBook) Annotations() []schema.Annotation {
	return table("address_book")
}

func (AddressBook) Fields() []ent.Field {
	return []ent.Field{
		id(),
		owner(),
		field.Int64("addresses").Default(0),
		// NULL only while the book is empty.
		field.Int64("default_address_id").Optional().Nillable(),
	}
}

func (AddressBook) Indexes() []ent.Index {
	return []ent.Index{index.Fields("user_id").Unique()}
}
