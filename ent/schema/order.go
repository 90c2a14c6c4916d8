package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/edge"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Order is a customer's order. Its status moves only by CAS on the old
// status (UPDATE … WHERE status = ?), so cancel, the timeout closer, refunds
// and payment notifications each take effect exactly once.
type Order struct{ ent.Schema }

func (Order) Annotations() []schema.Annotation {
	return table("orders")
}

func (Order) Fields() []ent.Field {
	return []ent.Field{
		id(),
		// Random, not a sequence: order numbers must not be guessable.
		field.String("order_sn").MaxLen(32).NotEmpty().Immutable(),
		owner(),
		field.Enum("status").GoType(enums.OrderStatus("")).Default(string(enums.OrderUnpaid)),
		field.Int64("amount").GoType(money.Money(0)),
		// The lines' sum and the coupon's discount (internal/pricing): amount
		// = subtotal - discount (+ shipping). 0 on orders placed before they
		// were stored.
		field.Int64("subtotal").GoType(money.Money(0)).Default(0),
		field.Int64("discount").GoType(money.Money(0)).Default(0),
		// The user coupon the order locked or used (internal/promo).
		field.Int64("user_coupon_id").Optional().Nillable(),
		field.String("currency").MaxLen(3),
		field.String("remark").MaxLen(255).Default(""),
		// Why it was closed: cancel, timeout.
		field.String("close_reason").MaxLen(32).Default(""),
		// Set when money arrived that did not pay the order (it was already
		// closed, or already paid by another payment): a person must refund or
		// review it (the order is never reopened silently).
		field.Bool("needs_review").Default(false),
		version(),
		createdAt(),
		field.Time("expires_at").SchemaType(datetime),
		field.Time("paid_at").SchemaType(datetime).Optional().Nillable(),
		field.Time("closed_at").SchemaType(datetime).Optional().Nillable(),
		// payment.id of the payment that paid the order, set in the same CAS that
		// moves it UNPAID → PAID and never changed after, so refunds know which
		// payment to refund and later payments are recognised as extra money.
		// NULL on orders paid before the column existed (the old rules apply).
		field.Int64("paid_payment_id").Optional().Nillable(),
		// Shipping (issue 41). The fee is part of amount (subtotal −
		// discount + shipping_fee), frozen at placement; the address is a
		// copy (JSON of internal/shipping.OrderAddress), never a link to
		// the address book, NULL when the order has none.
		field.Int64("shipping_fee").GoType(money.Money(0)).Default(0),
		field.Text("shipping_address").Optional().Nillable(),
		// When the last unit shipped (SHIPPED); the closer completes the
		// order --auto-confirm-after later.
		field.Time("shipped_at").SchemaType(datetime).Optional().Nillable(),
		field.Time("completed_at").SchemaType(datetime).Optional().Nillable(),
		// After-sales (issue 43, internal/aftersale): refund_reserved is the
		// money of refunds sent or confirmed, raised by a CAS that keeps it at
		// most amount before any refund is sent; refunded_amount is what the
		// provider confirmed, raised by a CAS that keeps it at most
		// refund_reserved. The order is REFUNDED when refunded_amount = amount.
		field.Int64("refund_reserved").GoType(money.Money(0)).Default(0),
		field.Int64("refunded_amount").GoType(money.Money(0)).Default(0),
	}
}

func (Order) Edges() []ent.Edge {
	return []ent.Edge{edge.To("lines", OrderLine.Type), edge.To("adjustments", OrderAdjustment.Type)}
}

func (Order) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("order_sn").Unique(),
		index.Fields("user_id", "id"),
		// The timeout closer scans unpaid orders by age.
		index.Fields("status", "created_at"),
		// The admin order list (docs/shipping.md): a status filter reads
		// (status, id) in the list's order; a time window reads created_at.
		index.Fields("status", "id"),
		index.Fields("created_at"),
		// The closer's auto-confirm finds SHIPPED orders by shipped_at.
		index.Fields("status", "shipped_at"),
	}
}
