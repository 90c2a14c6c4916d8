package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/refund"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Refunds are decided by after-sales (internal/aftersale: what goes back,
// how much, whole or in part, by whom); payments writes their rows, sends
// them to the providers and settles the providers' answers. A refund's
// transaction takes the paying payment's row first (PayingTx), opens its
// refund (OpenRefundTx) and, once committed, sends it (SendRefund).

// Paying is the payment that paid an order, as its refunds name it.
type Paying struct {
	ID       int64 // the payment's row
	Provider string
	OrderID  int64
	OrderSn  string
	Currency string
}

// RefundAsk is a refund an after-sale needs sent.
type RefundAsk struct {
	AfterSaleID int64
	AfterSaleSn string
	Amount      money.Money
	Reason      string
}

// PayingTx takes the row of the payment that paid order o, the first lock
// of every refunding transaction (lockPaying), and names it: the one the
// order names, or for an order paid before orders named their payment its
// first PAID one. Its provider must be configured: a refund no provider
// can send is refused before anything of it is written.
func (s *Service) PayingTx(ctx context.Context, tx *ent.Tx, o *checkout.Order) (Paying, error) {
	var paid *int64
	if o.PaidPaymentID != 0 {
		paid = &o.PaidPaymentID
	}
	rows, err := lockPaying(ctx, tx, o.ID, o.OrderSn, paid)
	if err != nil {
		return Paying{}, err
	}
	if len(rows) == 0 {
		return Paying{}, fmt.Errorf("%w: order %s has no payment to refund", checkout.ErrInvalidOrderState, o.OrderSn)
	}
	if _, ok := s.cfg.Providers[rows[0].Provider]; !ok {
		return Paying{}, fmt.Errorf("%w: order %s was paid through %q, which is not configured", errs.InvalidInput, o.OrderSn, rows[0].Provider)
	}
	return Paying{ID: rows[0].ID, Provider: rows[0].Provider, OrderID: o.ID, OrderSn: o.OrderSn, Currency: o.Currency}, nil
}

// OpenRefundTx writes an after-sale's refund of payment p PENDING in its
// transaction, or finds the one it has. The after-sale's refunds are read
// under their locks, after the paying payment's row the caller holds
// (PayingTx), so what they say is the latest word: one PENDING is the
// refund (its number again); one SUCCEEDED returned the money already, and
// nothing is opened ("": nothing to send); otherwise (none, or all
// refused) a new refund numbered the after-sale's and the count of its
// refunds, plus one. Callers at the same moment name the same number (the
// unique key makes it one refund).
func (s *Service) OpenRefundTx(ctx context.Context, tx *ent.Tx, p Paying, ask RefundAsk) (string, error) {
	var earlier []struct {
		RefundNo string             `sql:"refund_no"`
		Status   enums.RefundStatus `sql:"status"`
	}
	// By order_id, the refunds' index (see lockRefunds).
	err := tx.Refund.Query().Where(refund.OrderID(p.OrderID), refund.AfterSaleID(ask.AfterSaleID)).Order(refund.ByID()).Modify(func(sel *entsql.Selector) {
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
		SetRefundNo(no).SetOrderID(p.OrderID).SetOrderSn(p.OrderSn).SetPaymentRef(p.ID).SetProvider(p.Provider).
		SetAmount(ask.Amount).SetCurrency(p.Currency).SetReason(ask.Reason).SetStatus(enums.RefundPending).
		SetNextAttemptAt(s.now()).SetAfterSaleID(ask.AfterSaleID).
		OnConflict(entsql.ConflictColumns(refund.FieldRefundNo), entsql.ResolveWithIgnore()).Exec(ctx)
	if err != nil {
		return "", fmt.Errorf("recording refund %s: %w", no, err)
	}
	return no, nil
}

// SendRefund sends refund no once its transaction committed: claimed
// first, so of two callers one sends.
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
