package payments

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Refund moves a PAID order to REFUNDED by CAS (admin). Only the caller that
// wins the CAS restores stock (ledger change type 4) through the same
// idempotent restore closing uses, and marks the payment that paid the order
// REFUNDED; extra payments stay PAID for a person to refund. A concurrent or
// repeated refund finds the order already REFUNDED and changes nothing.
func (s *Service) Refund(ctx context.Context, orderSn, reason string) (*checkout.Order, error) {
	if reason == "" || len(reason) > 255 {
		return nil, fmt.Errorf("%w: a refund reason of 1 to 255 characters is required", errs.InvalidInput)
	}
	o, err := s.db.Client.Order.Query().Where(order.OrderSn(orderSn)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no order %s", checkout.ErrNotFound, orderSn)
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	var won bool
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		if err := lockPaying(ctx, tx, o); err != nil {
			return err
		}
		var err error
		won, err = refundTx(ctx, tx, o.ID, s)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	if !won {
		// After the transaction: inside it, MariaDB's snapshot dates from
		// before the CAS (checkout.CloseTx reads the order's goods first)
		// and would not show the refund that won.
		cur, err := s.db.Client.Order.Get(ctx, o.ID)
		if err != nil {
			return nil, store.Classify(err)
		}
		if cur.Status != enums.OrderRefunded {
			return nil, fmt.Errorf("%w: order %s is %s, only PAID orders can be refunded", checkout.ErrInvalidOrderState, orderSn, cur.Status)
		}
	}
	return s.orders.Order(ctx, "", true, orderSn)
}

// lockPaying takes the row of the payment that paid order o (every PAID
// one for an order paid before orders named their payment), in ascending
// id, before anything of the order: the lock order of a provider's refund
// notification, whose upsert holds the payment's row before it refunds the
// order. Taken after the order's CAS, as refundTx's last write took it, an
// admin's refund and the provider's for the same order deadlocked, each
// holding the row the other wanted next.
func lockPaying(ctx context.Context, tx *ent.Tx, o *ent.Order) error {
	q := tx.Payment.Query().Where(payment.OrderID(o.ID), payment.StatusEQ(enums.PaymentPaid))
	if o.PaidPaymentID != nil {
		q = tx.Payment.Query().Where(payment.ID(*o.PaidPaymentID))
	}
	_, err := q.Order(payment.ByID()).Modify(func(s *entsql.Selector) {
		s.Select(s.C(payment.FieldID))
		store.UpdateLock(s)
	}).Ints(ctx)
	if err != nil {
		return fmt.Errorf("locking the payment of order %s: %w", o.OrderSn, err)
	}
	return nil
}

// refundTx is the refund transition inside tx, shared by the admin mutation
// and a provider's REFUNDED notification for the paying payment.
func refundTx(ctx context.Context, tx *ent.Tx, orderID int64, s *Service) (bool, error) {
	won, err := checkout.CloseTx(ctx, tx, orderID, checkout.Refund, s.now())
	if err != nil || !won {
		return won, err
	}
	// This transaction has just changed the row, so it reads its latest version.
	o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldPaidPaymentID).Only(ctx)
	if err != nil {
		return false, err
	}
	paid := tx.Payment.Update().Where(payment.OrderID(orderID), payment.StatusEQ(enums.PaymentPaid))
	if o.PaidPaymentID != nil {
		// Only the payment that paid the order: extra money is a person's to refund.
		paid.Where(payment.ID(*o.PaidPaymentID))
	} // else paid before orders named their payment: every PAID one (the old rule)
	return true, paid.SetStatus(enums.PaymentRefunded).AddVersion(1).Exec(ctx)
}
