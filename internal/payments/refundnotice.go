package payments

import (
	"context"
	"fmt"
	"log/slog"

	"storefront/ent"
	"storefront/ent/payment"
	"storefront/ent/refund"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// refundNotice applies a verified notification of a refund's outcome. A
// refund this shop sent (its number) is confirmed or failed by CAS, once,
// checked against what was sent (provider, amount, currency). A refund
// made elsewhere (the merchant console, the dashboard) of the whole paying
// payment is the payment's REFUNDED, as a REFUNDED notification is; when
// this shop has a refund of that payment pending, that one is confirmed
// instead. A partial refund made elsewhere is acknowledged and logged for
// a person: this shop refunds orders whole.
func (s *Service) refundNotice(ctx context.Context, p Provider, n Notice, digest string) (Outcome, error) {
	rn := n.Refund
	var r *ent.Refund
	if rn.RefundNo != "" {
		var err error
		r, err = s.db.Client.Refund.Query().Where(refund.RefundNo(rn.RefundNo)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return "", store.Classify(err)
		}
	}
	if r == nil {
		pay, err := s.db.Client.Payment.Query().Where(payment.Provider(p.Name()), payment.PaymentID(n.PaymentID)).Only(ctx)
		if ent.IsNotFound(err) {
			slog.WarnContext(ctx, "refund notification for a payment this shop does not know: acknowledged", "provider", p.Name(), "paymentId", n.PaymentID)
			return OutcomeIgnored, nil
		}
		if err != nil {
			return "", store.Classify(err)
		}
		if rn.Status != enums.RefundSucceeded || rn.Amount != pay.Amount {
			slog.WarnContext(ctx, "a refund made outside this shop: review by hand", "provider", p.Name(), "paymentId", n.PaymentID,
				"amount", rn.Amount.String(), "status", string(rn.Status))
			return OutcomeIgnored, nil
		}
		r, err = s.db.Client.Refund.Query().Where(refund.PaymentRef(pay.ID), refund.StatusEQ(enums.RefundPending)).First(ctx)
		if ent.IsNotFound(err) {
			return s.apply(ctx, p, Notice{EventID: n.EventID, PaymentID: n.PaymentID, OrderSn: pay.OrderSn, MerchantID: n.MerchantID,
				Currency: pay.Currency, Amount: pay.Amount, Status: enums.PaymentRefunded}, digest)
		}
		if err != nil {
			return "", store.Classify(err)
		}
	}
	if r.Provider != p.Name() {
		return "", fmt.Errorf("%w: %s is a refund of %s", ErrUnknownRefund, r.RefundNo, r.Provider)
	}
	if rn.Amount != r.Amount {
		return "", fmt.Errorf("%w: refund %s of %s, notified %s", ErrAmount, r.RefundNo, r.Amount, rn.Amount)
	}
	if n.Currency != "" && n.Currency != r.Currency {
		return "", fmt.Errorf("%w: refund %s in %s, notified %s", ErrCurrency, r.RefundNo, r.Currency, n.Currency)
	}
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		ev, err := recordEvent(ctx, tx, p.Name(), n.EventID, digest)
		if err != nil {
			return err
		}
		if err := tx.PaymentEvent.UpdateOneID(ev.ID).SetPaymentRef(r.PaymentRef).Exec(ctx); err != nil {
			return err
		}
		_, err = settleRefundTx(ctx, tx, s, r.ID, rn.ProviderRefundID, rn.Status, rn.Failure)
		return err
	})
	return outcome(err)
}
