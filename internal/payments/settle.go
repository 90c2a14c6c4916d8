package payments

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/ent/refund"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// settleRefund ends refund id as status says (the provider's answer to a
// send).
func (s *Service) settleRefund(ctx context.Context, id int64, providerRefundID string, status enums.RefundStatus, failure string) error {
	return store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		_, err := settleRefundTx(ctx, tx, s, id, providerRefundID, status, failure)
		return err
	})
}

// ignoreLateSuccess drops a success reported after a failure, as this
// shop did before it followed the provider's last word: only reconcile's
// test sets it, to show that reconcile catches it.
var ignoreLateSuccess bool

// settleRefundTx moves refund id to status as the provider's last word
// says, by CAS, after taking the paying payment's row as every refund does
// (lockPaying):
//
//	PENDING   → SUCCEEDED | FAILED   the answer to a send, or a notification
//	FAILED    → SUCCEEDED            a success reported after a failure (WeChat Pay's
//	                                 ABNORMAL refund completed by hand in the merchant
//	                                 platform, a Stripe refund that succeeded after all)
//	SUCCEEDED → (kept)               a failure reported after a success: the order is
//	                                 flagged (checkout.FlagRefundReviewTx)
//
// Only the winner of a move to SUCCEEDED books the refund (bookSucceeded),
// so a success is booked once however it arrives. It reports whether this
// call moved the refund.
func settleRefundTx(ctx context.Context, tx *ent.Tx, s *Service, id int64, providerRefundID string, status enums.RefundStatus, failure string) (bool, error) {
	// The paying payment's row before the refund's: a provider's REFUNDED
	// notification holds the payment's row (its upsert) when it confirms the
	// order's pending refund (refundTx); taking the refund's row first, a
	// confirmation in the answer to a send deadlocked with it on MariaDB
	// (TestAdminAndProviderRefundsDoNotDeadlock).
	r, err := tx.Refund.Get(ctx, id)
	if err != nil {
		return false, err
	}
	o, err := tx.Order.Query().Where(order.ID(r.OrderID)).Select(order.FieldID, order.FieldOrderSn, order.FieldPaidPaymentID).Only(ctx)
	if err != nil {
		return false, err
	}
	if _, err := lockPaying(ctx, tx, o.ID, o.OrderSn, o.PaidPaymentID); err != nil {
		return false, err
	}
	// Then every refund of the order, before any of them changes: what they
	// say is the latest word, and a sender's claim of one of them (a single
	// UPDATE) waits for this transaction instead of deadlocking with it.
	refunds, err := lockRefunds(ctx, tx, o.ID)
	if err != nil {
		return false, err
	}
	if err := tx.Refund.UpdateOneID(id).SetProviderStatus(status).Exec(ctx); err != nil {
		return false, fmt.Errorf("recording the provider's word on refund %s: %w", r.RefundNo, err)
	}
	now := s.now()
	move := func(from enums.RefundStatus) (bool, error) {
		u := tx.Refund.Update().Where(refund.ID(id), refund.StatusEQ(from)).
			SetStatus(status).SetSettledAt(now).SetFailure(truncate(failure, 512))
		if providerRefundID != "" {
			u.SetProviderRefundID(truncate(providerRefundID, 255))
		}
		n, err := u.Save(ctx)
		return n == 1, err
	}
	moved, err := move(enums.RefundPending)
	if err != nil || moved && status != enums.RefundSucceeded {
		return moved, err
	}
	if !moved {
		switch status {
		case enums.RefundSucceeded:
			if ignoreLateSuccess {
				return false, nil
			}
			if moved, err = move(enums.RefundFailed); err != nil || !moved {
				return false, err
			}
			slog.WarnContext(ctx, "a refund the provider had reported failed is now reported succeeded: booked as a success",
				"refundNo", r.RefundNo, "provider", r.Provider, "earlierFailure", r.Failure)
		case enums.RefundFailed:
			// The money booked stays booked: undoing a refund (its stock, the
			// order's REFUNDED) is a person's call, with the provider's words.
			n, err := tx.Refund.Update().Where(refund.ID(id), refund.StatusEQ(enums.RefundSucceeded)).
				SetFailure(truncate("reported failed after its success: "+failure, 512)).Save(ctx)
			if err != nil || n == 0 {
				return false, err
			}
			return false, checkout.FlagRefundReviewTx(ctx, tx, o.ID, r.RefundNo,
				"the provider reported a failure of a refund it had confirmed: the buyer may not have the money ("+failure+")")
		default:
			return false, nil
		}
	}
	var siblings []lockedRefund
	for _, l := range refunds {
		if l.ID != r.ID && l.AfterSale.Valid == (r.AfterSaleID != nil) && (r.AfterSaleID == nil || l.AfterSale.Int64 == *r.AfterSaleID) {
			siblings = append(siblings, l)
		}
	}
	return true, bookSucceeded(ctx, tx, s, r, o, siblings)
}

// lockedRefund is a refund as lockRefunds read it under its lock.
type lockedRefund struct {
	ID        int64              `sql:"id"`
	RefundNo  string             `sql:"refund_no"`
	Status    enums.RefundStatus `sql:"status"`
	Attempts  int                `sql:"attempts"`
	AfterSale sql.NullInt64      `sql:"after_sale_id"`
}

// lockRefunds reads the refunds of order orderID under their locks, oldest
// first, through the refunds' order_id index (a locking read of a column
// without an index would lock every refund of the shop on MariaDB). It is
// taken after the paying payment's row (lockPaying), as every refund's
// transaction takes them.
func lockRefunds(ctx context.Context, tx *ent.Tx, orderID int64) ([]lockedRefund, error) {
	var rows []lockedRefund
	err := tx.Refund.Query().Where(refund.OrderID(orderID)).Order(refund.ByID()).Modify(func(sel *entsql.Selector) {
		sel.Select(sel.C(refund.FieldID), sel.C(refund.FieldRefundNo), sel.C(refund.FieldStatus), sel.C(refund.FieldAttempts),
			sel.C(refund.FieldAfterSaleID))
		store.UpdateLock(sel)
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("locking the refunds of order %d: %w", orderID, err)
	}
	return rows, nil
}

// bookSucceeded books refund r of order o, which this transaction has just
// moved to SUCCEEDED. A refund never returns money another refund returned:
// its siblings (the other refunds of its after-sale, or of its order for a
// refund sent before after-sales, as lockRefunds read them), and
//   - when one of them SUCCEEDED, the provider paid the same money twice:
//     its money entry is booked (it went back), nothing else moves again, and the order is flagged;
//   - those still PENDING are ended FAILED, never to be sent again (what
//     they would return, r returned); one already sent may still be paid
//     out by the provider, so the order is flagged.
//
// Otherwise what the confirmation moves beyond payments' rows is the
// after-sales' (Settlement.RefundedTx: the after-sale REFUNDED, the
// order's refunded money, the stock of the units that never shipped), as
// for any confirmed refund.
func bookSucceeded(ctx context.Context, tx *ent.Tx, s *Service, r *ent.Refund, o *ent.Order, siblings []lockedRefund) error {
	// The money went back, whatever else is wrong: the ledger books it, so
	// that reconcile shows an order refunded twice as what it is.
	if err := bookRefundTx(ctx, tx, r); err != nil {
		return err
	}
	for _, sib := range siblings {
		if sib.Status == enums.RefundSucceeded {
			return checkout.FlagRefundReviewTx(ctx, tx, o.ID, r.RefundNo,
				"the provider returned the same money twice: "+sib.RefundNo+" was confirmed before, the after-sale and the order are not refunded again")
		}
	}
	for _, sib := range siblings {
		if sib.Status != enums.RefundPending {
			continue
		}
		n, err := tx.Refund.Update().Where(refund.ID(sib.ID), refund.StatusEQ(enums.RefundPending)).
			SetStatus(enums.RefundFailed).SetSettledAt(s.now()).
			SetFailure("not sent again: " + r.RefundNo + " of the same money was confirmed").Save(ctx)
		if err != nil {
			return err
		}
		if n == 1 && sib.Attempts > 0 {
			if err := checkout.FlagRefundReviewTx(ctx, tx, o.ID, sib.RefundNo,
				"sent to the provider, which may still pay it out, while "+r.RefundNo+" of the same money was confirmed"); err != nil {
				return err
			}
		}
	}
	var whole bool
	var err error
	if r.AfterSaleID == nil {
		// A refund sent before after-sales existed: the whole order, as then.
		whole, err = s.cfg.Settlement.RefundedWholeTx(ctx, tx, o.ID, s.now())
	} else {
		whole, err = s.cfg.Settlement.RefundedTx(ctx, tx, *r.AfterSaleID, s.now())
	}
	if err != nil || !whole {
		return err
	}
	return markPaidRefunded(ctx, tx, o)
}

// lockPaying takes the row of the payment that paid order orderID (the
// one paid names, or every PAID one for an order paid before orders named
// their payment), in ascending id, before anything of the order, and
// returns them, the paying one first: the lock order of a provider's
// refund notification, whose upsert holds the payment's row before it
// refunds the order. Taken after the order's CAS, an admin's refund and
// the provider's for the same order deadlocked, each holding the row the
// other wanted next.
func lockPaying(ctx context.Context, tx *ent.Tx, orderID int64, orderSn string, paid *int64) ([]payingRow, error) {
	q := tx.Payment.Query().Where(payment.OrderID(orderID), payment.StatusEQ(enums.PaymentPaid))
	if paid != nil {
		q = tx.Payment.Query().Where(payment.ID(*paid))
	}
	var rows []payingRow
	err := q.Order(payment.ByID()).Modify(func(s *entsql.Selector) {
		s.Select(s.C(payment.FieldID), s.C(payment.FieldProvider))
		store.UpdateLock(s)
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("locking the payment of order %s: %w", orderSn, err)
	}
	return rows, nil
}

// payingRow is a payment as lockPaying read it under its lock.
type payingRow struct {
	ID       int64  `sql:"id"`
	Provider string `sql:"provider"`
}
