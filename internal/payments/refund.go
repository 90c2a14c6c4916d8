package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/ent/refund"
	"storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Refund refunds a PAID order (admin) through the provider of the payment
// that paid it, as a whole-order after-sale (internal/aftersale): a refund
// only of every unit (and the shipping fee, nothing having shipped),
// approved at once, whose refund row's number (<after-sale number>-R1) is
// its idempotency key at the provider, written PENDING and sent. When the
// provider confirms it (in its answer or a later notification) the
// after-sale is REFUNDED, the order's refunded money reaches what was paid
// and the order moves to REFUNDED by CAS; only that transaction restores
// the stock (ledger change type 4 under the after-sale's number) and marks
// the payment REFUNDED; extra payments stay PAID for a person to refund. A
// refund the provider refuses is FAILED and the order stays PAID; a send
// whose answer was lost stays PENDING and the sweeper sends it again with
// the same number. Two refunds at once are one refund. A repeated refund
// of a REFUNDED order changes nothing.
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
	switch o.Status {
	case enums.OrderRefunded:
		return s.orders.Order(ctx, "", true, orderSn)
	case enums.OrderPaid:
	default:
		return nil, fmt.Errorf("%w: order %s is %s, only PAID orders can be refunded", checkout.ErrInvalidOrderState, orderSn, o.Status)
	}
	pay, err := payingPayment(ctx, s.db.Client, o)
	if err != nil {
		return nil, store.Classify(err)
	}
	if _, ok := s.cfg.Providers[pay.Provider]; !ok {
		return nil, fmt.Errorf("%w: order %s was paid through %q, which is not configured", errs.InvalidInput, orderSn, pay.Provider)
	}
	err = s.afterSales.RefundOrder(ctx, aftersale.Actor{ID: "admin", Admin: true}, orderSn, reason)
	if err != nil && errors.Is(err, checkout.ErrInvalidOrderState) {
		// Refunded at the provider meanwhile: a refund of a REFUNDED order.
		if cur, rerr := s.orders.Order(ctx, "", true, orderSn); rerr == nil && cur != nil && cur.Status == enums.OrderRefunded {
			return cur, nil
		}
	}
	if err != nil {
		return nil, err
	}
	return s.orders.Order(ctx, "", true, orderSn)
}

// payingPayment is the payment that paid o: the one it names, or for an
// order paid before orders named their payment, its first PAID one.
func payingPayment(ctx context.Context, c *ent.Client, o *ent.Order) (*ent.Payment, error) {
	if o.PaidPaymentID != nil {
		return c.Payment.Get(ctx, *o.PaidPaymentID)
	}
	return c.Payment.Query().Where(payment.OrderID(o.ID), payment.StatusEQ(enums.PaymentPaid)).Order(payment.ByID()).First(ctx)
}

// LockPayingTx takes the row of the payment that paid order orderID
// (aftersale.Refunds): the first lock of an after-sale's refunding
// transaction, as of every refund (lockPaying).
func (s *Service) LockPayingTx(ctx context.Context, tx *ent.Tx, orderID int64) error {
	o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldID, order.FieldOrderSn, order.FieldPaidPaymentID).Only(ctx)
	if err != nil {
		return fmt.Errorf("reading order %d: %w", orderID, err)
	}
	return lockPaying(ctx, tx, o)
}

// OpenRefundTx writes an after-sale's refund PENDING in its transaction,
// or finds the one it has (aftersale.Refunds). The after-sale's refunds
// are read under their locks, after the paying payment's row the caller
// holds (LockPayingTx), so what they say is the latest word: one PENDING
// is the refund (its number again); one SUCCEEDED returned the money
// already, and nothing is opened ("": nothing to send); otherwise (none,
// or all refused) a new refund numbered the after-sale's and the count of
// its refunds, plus one. Callers at the same moment name the same number
// (the unique key makes it one refund). It refunds the payment that paid
// the order, whose provider must be configured.
func (s *Service) OpenRefundTx(ctx context.Context, tx *ent.Tx, ask aftersale.RefundAsk) (string, error) {
	o, err := tx.Order.Get(ctx, ask.OrderID)
	if err != nil {
		return "", fmt.Errorf("reading order %d: %w", ask.OrderID, err)
	}
	pay, err := payingPayment(ctx, tx.Client(), o)
	if ent.IsNotFound(err) {
		return "", fmt.Errorf("%w: order %s has no payment to refund", checkout.ErrInvalidOrderState, o.OrderSn)
	}
	if err != nil {
		return "", err
	}
	if _, ok := s.cfg.Providers[pay.Provider]; !ok {
		return "", fmt.Errorf("%w: order %s was paid through %q, which is not configured", errs.InvalidInput, o.OrderSn, pay.Provider)
	}
	var earlier []struct {
		RefundNo string             `sql:"refund_no"`
		Status   enums.RefundStatus `sql:"status"`
	}
	// By order_id, the refunds' index (see lockRefunds).
	err = tx.Refund.Query().Where(refund.OrderID(o.ID), refund.AfterSaleID(ask.AfterSaleID)).Order(refund.ByID()).Modify(func(sel *entsql.Selector) {
		sel.Select(sel.C(refund.FieldRefundNo), sel.C(refund.FieldStatus))
		store.UpdateLock(sel)
	}).Scan(ctx, &earlier)
	if err != nil {
		return "", fmt.Errorf("locking the refunds of after-sale %s: %w", ask.AfterSaleSn, err)
	}
	for _, e := range earlier {
		switch e.Status {
		case enums.RefundSucceeded:
			return "", nil
		case enums.RefundPending:
			return e.RefundNo, nil
		}
	}
	no := fmt.Sprintf("%s-R%d", ask.AfterSaleSn, len(earlier)+1)
	err = tx.Refund.Create().
		SetRefundNo(no).SetOrderID(o.ID).SetOrderSn(o.OrderSn).SetPaymentRef(pay.ID).SetProvider(pay.Provider).
		SetAmount(ask.Amount).SetCurrency(o.Currency).SetReason(truncate(ask.Reason, 255)).SetStatus(enums.RefundPending).
		SetNextAttemptAt(s.now()).SetAfterSaleID(ask.AfterSaleID).
		OnConflict(entsql.ConflictColumns(refund.FieldRefundNo), entsql.ResolveWithIgnore()).Exec(ctx)
	if err != nil {
		return "", fmt.Errorf("recording refund %s: %w", no, err)
	}
	return no, nil
}

// SendRefund sends refund no once its transaction committed
// (aftersale.Refunds): claimed first, so of two callers one sends.
func (s *Service) SendRefund(ctx context.Context, no string) error {
	r, err := s.db.Client.Refund.Query().Where(refund.RefundNo(no)).Only(ctx)
	if err != nil {
		return store.Classify(err)
	}
	p, ok := s.cfg.Providers[r.Provider]
	if !ok {
		return fmt.Errorf("%w: refund %s is of %q, which is not configured", errs.InvalidInput, no, r.Provider)
	}
	return s.send(ctx, p, r)
}

// send sends refund r to provider p if it is PENDING and due, claiming it
// first (its next attempt moves past the call): of two callers one sends.
// The answer decides: confirmed, refused, pending at the provider, or lost
// (the provider could not be reached or its answer not read), in which
// case it is sent again later with the same number. Only the database's
// errors are returned.
func (s *Service) send(ctx context.Context, p Provider, r *ent.Refund) error {
	now := s.now()
	var claimed int
	// Again on a deadlock, as a transaction is: the claim's index entry
	// (status, next_attempt_at) can meet a settling transaction's.
	err := store.Retry(ctx, func() error {
		var err error
		claimed, err = s.db.Client.Refund.Update().
			Where(refund.ID(r.ID), refund.StatusEQ(enums.RefundPending), refund.NextAttemptAtLTE(now)).
			SetNextAttemptAt(now.Add(max(s.cfg.RefundRetry, 30*time.Second))).AddAttempts(1).Save(ctx)
		return err
	})
	if err != nil || claimed == 0 {
		return err
	}
	pay, err := s.db.Client.Payment.Get(ctx, r.PaymentRef)
	if err != nil {
		return err
	}
	res, err := p.Refund(ctx, RefundRequest{RefundNo: r.RefundNo, OrderSn: r.OrderSn, PaymentID: pay.PaymentID,
		Total: pay.Amount, Amount: r.Amount, Currency: r.Currency, Reason: r.Reason})
	switch {
	case errors.Is(err, ErrRefused):
		res = RefundResult{Status: enums.RefundFailed, Failure: err.Error()}
	case err != nil:
		slog.WarnContext(ctx, "refund not confirmed: sent again later with the same number", "refundNo", r.RefundNo, "provider", r.Provider, "err", err)
		return s.later(ctx, r, r.Attempts+1, "", err.Error())
	}
	switch res.Status {
	case enums.RefundSucceeded:
		return s.settleRefund(ctx, r.ID, res.ProviderRefundID, enums.RefundSucceeded, "")
	case enums.RefundFailed:
		slog.WarnContext(ctx, "refund refused by the provider: the order stays PAID", "refundNo", r.RefundNo, "provider", r.Provider, "failure", res.Failure)
		return s.settleRefund(ctx, r.ID, res.ProviderRefundID, enums.RefundFailed, res.Failure)
	}
	return s.later(ctx, r, r.Attempts+1, res.ProviderRefundID, "")
}

// later leaves refund r PENDING until its next send, after a wait that
// doubles with each attempt.
func (s *Service) later(ctx context.Context, r *ent.Refund, attempts int, providerRefundID, failure string) error {
	wait := s.cfg.RefundRetry
	for i := 1; i < attempts && wait < s.cfg.RefundRetryMax; i++ {
		wait *= 2
	}
	u := s.db.Client.Refund.Update().Where(refund.ID(r.ID), refund.StatusEQ(enums.RefundPending)).
		SetNextAttemptAt(s.now().Add(min(wait, s.cfg.RefundRetryMax))).SetFailure(truncate(failure, 512))
	if providerRefundID != "" {
		u.SetProviderRefundID(truncate(providerRefundID, 255))
	}
	return u.Exec(ctx)
}

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
	o, err := tx.Order.Get(ctx, r.OrderID)
	if err != nil {
		return false, err
	}
	if err := lockPaying(ctx, tx, o); err != nil {
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
// Otherwise the after-sale is REFUNDED (aftersale.RefundedTx: the order's
// refunded money, the stock of the units that never shipped), as for any
// confirmed refund.
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
	if r.AfterSaleID == nil {
		// A refund sent before after-sales existed: the whole order, as then.
		_, err := wholeRefundTx(ctx, tx, o.ID, s)
		return err
	}
	whole, err := aftersale.RefundedTx(ctx, tx, *r.AfterSaleID, s.now())
	if err != nil || !whole {
		return err
	}
	return markPaidRefunded(ctx, tx, o.ID)
}

// SweepRefunds sends again every PENDING refund that is due: a send whose
// answer was lost, or a refund the provider has not confirmed yet (sending
// the same number again answers its state). It returns how many it sent.
func (s *Service) SweepRefunds(ctx context.Context) (int, error) {
	due, err := s.db.Client.Refund.Query().
		Where(refund.StatusEQ(enums.RefundPending), refund.NextAttemptAtLTE(s.now())).
		Order(refund.ByNextAttemptAt()).Limit(100).All(ctx)
	if err != nil {
		return 0, store.Classify(err)
	}
	sent := 0
	for _, r := range due {
		p, ok := s.cfg.Providers[r.Provider]
		if !ok {
			slog.WarnContext(ctx, "pending refund of a provider that is not configured", "refundNo", r.RefundNo, "provider", r.Provider)
			continue
		}
		if err := s.send(ctx, p, r); err != nil {
			return sent, store.Classify(err)
		}
		sent++
	}
	return sent, nil
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

// refundTx is a provider's REFUNDED notification for pay, the payment that
// paid its order, inside tx. When one of the order's after-sales has a
// refund pending, the provider's word that the payment is refunded is that
// refund's confirmation: the after-sale's mechanism refunds the order (and
// its stock) once, and books that refund. Otherwise the money went back
// outside this shop's refunds: it is booked as such, and the order is
// refunded whole or flagged (wholeRefundTx).
func refundTx(ctx context.Context, tx *ent.Tx, pay *ent.Payment, s *Service) (bool, error) {
	orderID := pay.OrderID
	pending, err := tx.Refund.Query().Where(refund.OrderID(orderID), refund.StatusEQ(enums.RefundPending), refund.AfterSaleIDNotNil()).
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
			return false, checkout.FlagRefundReviewTx(ctx, tx, orderID, pending.RefundNo,
				"the whole payment "+pay.PaymentID+" refunded at the provider while an after-sale refunds part of it")
		}
		return settleRefundTx(ctx, tx, s, pending.ID, "", enums.RefundSucceeded, "")
	}
	if err := bookOutsideRefundTx(ctx, tx, pay); err != nil {
		return false, err
	}
	return wholeRefundTx(ctx, tx, orderID, s)
}

// wholeRefundTx is the Refund transition of order orderID, whose paying
// payment went back whole: REFUNDED by CAS, its open after-sales ended and
// its payment marked REFUNDED; an order the transition cannot take (units
// shipped, part refunded already) is flagged for a person.
func wholeRefundTx(ctx context.Context, tx *ent.Tx, orderID int64, s *Service) (bool, error) {
	won, err := checkout.CloseTx(ctx, tx, orderID, checkout.Refund, s.now())
	if err != nil {
		return false, err
	}
	if !won {
		return false, checkout.FlagRefundedOutsideTx(ctx, tx, orderID)
	}
	if err := aftersale.EndOpenTx(ctx, tx, orderID, "the order was refunded in full at the provider", s.now()); err != nil {
		return false, err
	}
	return true, markPaidRefunded(ctx, tx, orderID)
}

// markPaidRefunded marks the payment that paid order orderID REFUNDED,
// once the whole order is.
func markPaidRefunded(ctx context.Context, tx *ent.Tx, orderID int64) error {
	// This transaction has just changed the row, so it reads its latest version.
	o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldPaidPaymentID).Only(ctx)
	if err != nil {
		return err
	}
	paid := tx.Payment.Update().Where(payment.OrderID(orderID), payment.StatusEQ(enums.PaymentPaid))
	if o.PaidPaymentID != nil {
		// Only the payment that paid the order: extra money is a person's to refund.
		paid.Where(payment.ID(*o.PaidPaymentID))
	} // else paid before orders named their payment: every PAID one (the old rule)
	return paid.SetStatus(enums.PaymentRefunded).AddVersion(1).Exec(ctx)
}

// truncate makes a provider's words storable: valid UTF-8 without NUL (which
// PostgreSQL refuses) in at most n bytes, cut at a character's boundary.
func truncate(s string, n int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "?"), "\x00", "")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
