package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
)

// Cart is a shopper's cart (issue 20), written only by package cart. Clients
// name it by token, never by id: the autoincrement id would let anyone walk
// other people's anonymous carts.
type Cart struct{ ent.Schema }

func (Cart) Annotations() []schema.Annotation {
	return table("cart")
}

func (Cart) Fields() []ent.Field {
	return []ent.Field{
		id(),
		// 128 random bits, hex: the cart's public id.
		field.String("token").MaxLen(32).NotEmpty().Immutable(),
		// The customer the cart belongs to; "" while anonymous.
		field.String("owner").MaxLen(64).Default(""),
		// owner while the cart is the customer's open cart, NULL otherwise:
		// the unique index keeps one open cart per customer even when two
		// sign-ins race (NULLs do not collide).
		field.String("open_owner").MaxLen(64).Optional().Nillable(),
		field.Enum("status").GoType(enums.CartStatus("")).Default(string(enums.CartOpen)),
		// The order it became (COMPLETED).
		field.String("order_sn").MaxLen(32).Optional().Nillable(),
		// The idempotency key of a checkout that may have placed an order:
		// set by the claim, kept until the checkout is known to have failed,
		// so every retry places under the same key and replays, never doubles.
		field.String("checkout_key").MaxLen(255).Optional().Nillable(),
		// A running checkout's lease, and its owner's token (see cart/checkout.go).
		field.Time("checkout_lease").SchemaType(datetime).Optional().Nillable(),
		// The customer's claimed coupon chosen for the cart's order
		// (cartCouponUpdate), NULL: none. A plain column: the user coupon is
		// promo's, and whether it still applies is decided on every read.
		field.Int64("user_coupon_id").Optional().Nillable(),
		// Bumped by every change of the cart or its lines: a checkout claims
		// the version whose lines it orders.
		version(),
		createdAt(),
		// Last change by its shopper; the cart expires a TTL after it.
		field.Time("updated_at").SchemaType(datetime),
	}
}

func (Cart) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("token").Unique(),
		index.Fields("open_owner").Unique(),
		// The purge scans carts by age.
		index.Fields("updated_at"),
	}
}

// CartLine is one SKU of a cart: one row per SKU, quantities add up.
type CartLine struct{ ent.Schema }

func (CartLine) Annotations() []schema.Annotation {
	return table("cart_line")
}

func (CartLine) Fields() []ent.Field {
	return []ent.Field{
		id(),
		// Plain columns: lines go with their cart (deleted by the purge and the
		// merge, in the same transaction), and the SKU is catalog's.
		field.Int64("cart_id"),
		field.Int64("item_id"),
		field.Int64("quantity"),
		// The price the shopper last saw for the line (when it was added or
		// its quantity changed): PRICE_CHANGED compares the current price with it.
		field.Int64("seen_price"),
		createdAt(),
	}
}

func (CartLine) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("cart_id", "item_id").Unique(),
	}
}
