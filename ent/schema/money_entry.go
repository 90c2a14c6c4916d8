package schema

import (
	"entgo.io/ent"
	"entgo.io/ent/schema"
	"entgo.io/ent/schema/field"
	"entgo.io/ent/schema/index"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// MoneyEntry is one movement of money of an order, the money ledger as
// stock_log is the stock's: a payment that paid it (CHARGE, positive), one
// it did not need (EXTRA, positive), money back (REFUND, negative). Each is
// written in the transaction that moves the money, under a business key
// (kind, provider, reference) that makes it happen once; rows are never
// changed. `storefront reconcile` proves orders, payments and refunds
// against it. Written by payments only.
type MoneyEntry struct{ ent.Schema }

func (MoneyEntry) Annotations() []schema.Annotation {
	return table("money_entry")
}

func (MoneyEntry) Fields() []ent.Field {
	return []ent.Field{
		id(),
		field.Int64("order_id").Immutable(),
		field.String("order_sn").MaxLen(32).Immutable(),
		field.Enum("kind").GoType(enums.MoneyEntryKind("")).Immutable(),
		// Signed: positive into the shop, negative back to the buyer.
		field.Int64("amount").GoType(money.Money(0)).Immutable(),
		field.String("currency").MaxLen(3).Immutable(),
		field.String("provider").MaxLen(32).Immutable(),
		// The provider's payment id (CHARGE, EXTRA), the refund's number
		// (REFUND), or "payment:<payment id>" for a whole payment refunded
		// at the provider without a refund of this shop's.
		field.String("reference").MaxLen(128).Immutable(),
		createdAt(),
	}
}

func (MoneyEntry) Indexes() []ent.Index {
	return []ent.Index{
		index.Fields("kind", "provider", "reference").Unique(),
		index.Fields("order_id"),
	}
}
