package payments

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/moneyentry"
	"storefront/ent/refund"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// The money ledger (money_entry): every movement of an order's money is a
// row written in the transaction that moves it, under the business key
// (kind, provider, reference), so that it is booked exactly once whoever
// repeats it; payments is its one writer. A payment is booked where its
// side effects run once (settle: CHARGE when it paid the order, EXTRA when
// the order did not need it), a refund where its CAS to SUCCEEDED wins
// (settleRefundTx), a whole payment refunded at the provider where the
// REFUNDED notification refunds or flags the order (refundTx).

// Entry is one row of the money ledger.
type Entry struct {
	Kind      enums.MoneyEntryKind
	OrderID   int64
	OrderSn   string
	Amount    money.Money // positive in, negative back to the buyer
	Currency  string
	Provider  string
	Reference string
}

// outsideRefund is the reference of a whole payment refunded at the
// provider with no refund of this shop's.
func outsideRefund(paymentID string) string { return "payment:" + paymentID }

// bookTx writes e in tx. A second booking of one business key is a bug of
// the guard before it (each caller books after winning a CAS): the unique
// key refuses it and the transaction rolls back rather than count money
// twice.
func bookTx(ctx context.Context, tx *ent.Tx, e Entry) error {
	if err := create(tx, e).Exec(ctx); err != nil {
		return fmt.Errorf("booking %s %s of order %s (%s %s): %w", e.Kind, e.Amount, e.OrderSn, e.Provider, e.Reference, err)
	}
	return nil
}

// create is e's row.
func create(tx *ent.Tx, e Entry) *ent.MoneyEntryCreate {
	return tx.MoneyEntry.Create().SetKind(e.Kind).SetOrderID(e.OrderID).SetOrderSn(e.OrderSn).SetAmount(e.Amount).
		SetCurrency(e.Currency).SetProvider(e.Provider).SetReference(e.Reference)
}

// bookPaymentTx books payment pay of order o: CHARGE when it paid the
// order, EXTRA when the order did not need it.
func bookPaymentTx(ctx context.Context, tx *ent.Tx, pay *ent.Payment, paid bool) error {
	kind := enums.MoneyExtra
	if paid {
		kind = enums.MoneyCharge
	}
	return bookTx(ctx, tx, Entry{Kind: kind, OrderID: pay.OrderID, OrderSn: pay.OrderSn, Amount: pay.Amount,
		Currency: pay.Currency, Provider: pay.Provider, Reference: pay.PaymentID})
}

// bookRefundTx books refund r, which the provider confirmed.
func bookRefundTx(ctx context.Context, tx *ent.Tx, r *ent.Refund) error {
	return bookTx(ctx, tx, Entry{Kind: enums.MoneyRefund, OrderID: r.OrderID, OrderSn: r.OrderSn, Amount: -r.Amount,
		Currency: r.Currency, Provider: r.Provider, Reference: r.RefundNo})
}

// bookOutsideRefundTx books what of payment pay went back at the provider
// without a refund of this shop's (its merchant console), when the
// provider says the payment is refunded: the payment's amount less what
// this shop's confirmed refunds of it returned. The caller holds the
// payment's row (the notification's upsert), the lock every refund of it
// takes first, so the sum is not moving; the business key books it once
// however many REFUNDED notifications repeat it.
func bookOutsideRefundTx(ctx context.Context, tx *ent.Tx, pay *ent.Payment) error {
	done, err := tx.Refund.Query().Where(refund.PaymentRef(pay.ID), refund.StatusEQ(enums.RefundSucceeded)).All(ctx)
	if err != nil {
		return fmt.Errorf("reading the refunds of payment %s: %w", pay.PaymentID, err)
	}
	left := pay.Amount
	for _, r := range done {
		left -= r.Amount
	}
	if left <= 0 {
		return nil
	}
	err = create(tx, Entry{Kind: enums.MoneyRefund, OrderID: pay.OrderID, OrderSn: pay.OrderSn, Amount: -left,
		Currency: pay.Currency, Provider: pay.Provider, Reference: outsideRefund(pay.PaymentID)}).
		OnConflict(entsql.ConflictColumns(moneyentry.FieldKind, moneyentry.FieldProvider, moneyentry.FieldReference), entsql.ResolveWithIgnore()).
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("booking the refund of payment %s at the provider: %w", pay.PaymentID, err)
	}
	return nil
}

// MoneyLog is order orderID's money ledger, oldest first (Order.moneyLog).
func (s *Service) MoneyLog(ctx context.Context, orderID int64) ([]*ent.MoneyEntry, error) {
	rows, err := s.db.Client.MoneyEntry.Query().Where(moneyentry.OrderID(orderID)).Order(moneyentry.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the money log of order %d: %w", orderID, err)
	}
	return rows, nil
}
