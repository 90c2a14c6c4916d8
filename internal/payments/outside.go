package payments

import (
	"context"
	"time"

	"storefront/ent"
	"storefront/ent/payment"
	"storefront/ent/refund"
	"storefront/internal/checkout"
	"storefront/internal/vocab/enums"
)

// Settlement is what a refund's confirmation moves beyond payments' own
// rows: the after-sale and the order it refunds, decided by after-sales
// (internal/aftersale implements it; internal/app wires it in Config), in
// the transaction that settles the refund, which holds the paying
// payment's row.
type Settlement interface {
	// RefundedTx ends after-sale afterSaleID, whose refund the provider
	// confirmed, and reports whether its order is now refunded whole.
	RefundedTx(ctx context.Context, tx *ent.Tx, afterSaleID int64, now time.Time) (bool, error)
	// RefundedWholeTx refunds order orderID, whose paying payment went back
	// whole with no after-sale's refund (at the provider, or a refund sent
	// before after-sales), and reports whether it did (false: the order
	// could not be refunded so and was flagged for a person).
	RefundedWholeTx(ctx context.Context, tx *ent.Tx, orderID int64, now time.Time) (bool, error)
}

// refundTx is a provider's REFUNDED notification for pay, the payment that
// paid order o, inside tx. When one of the order's after-sales has a
// refund pending, the provider's word that the payment is refunded is that
// refund's confirmation, settled as its notification would be. Otherwise
// the money went back outside this shop's refunds: it is booked as such,
// and the after-sales refund the order whole or flag it.
func refundTx(ctx context.Context, tx *ent.Tx, pay *ent.Payment, o *ent.Order, s *Service) (bool, error) {
	pending, err := tx.Refund.Query().Where(refund.OrderID(o.ID), refund.StatusEQ(enums.RefundPending), refund.AfterSaleIDNotNil()).
		Order(refund.ByID()).First(ctx)
	if err != nil && !ent.IsNotFound(err) {
		return false, err
	}
	if pending != nil {
		pay, err := tx.Payment.Get(ctx, pending.PaymentRef)
		if err != nil {
			return false, err
		}
		if pending.Amount != pay.Amount {
			// Part of the order: the whole payment refunded elsewhere is for a
			// person to reconcile with it (the payment shows REFUNDED).
			if err := bookOutsideRefundTx(ctx, tx, pay); err != nil {
				return false, err
			}
			return false, checkout.FlagRefundReviewTx(ctx, tx, o.ID, pending.RefundNo,
				"the whole payment "+pay.PaymentID+" refunded at the provider while an after-sale refunds part of it")
		}
		return settleRefundTx(ctx, tx, s, pending.ID, "", enums.RefundSucceeded, "")
	}
	if err := bookOutsideRefundTx(ctx, tx, pay); err != nil {
		return false, err
	}
	whole, err := s.cfg.Settlement.RefundedWholeTx(ctx, tx, o.ID, s.now())
	if err != nil || !whole {
		return false, err
	}
	return true, markPaidRefunded(ctx, tx, o)
}

// markPaidRefunded marks the payment that paid order o REFUNDED, once the
// whole order is. paid_payment_id is written once, when the order is
// paid, so o as read earlier in the transaction names it.
func markPaidRefunded(ctx context.Context, tx *ent.Tx, o *ent.Order) error {
	paid := tx.Payment.Update().Where(payment.OrderID(o.ID), payment.StatusEQ(enums.PaymentPaid))
	if o.PaidPaymentID != nil {
		// Only the payment that paid the order: extra money is a person's to refund.
		paid.Where(payment.ID(*o.PaidPaymentID))
	} // else paid before orders named their payment: every PAID one (the old rule)
	return paid.SetStatus(enums.PaymentRefunded).AddVersion(1).Exec(ctx)
}
