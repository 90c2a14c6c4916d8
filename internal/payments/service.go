package payments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/internal/checkout"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// New returns the payments service.
func New(db *store.DB, cfg Config) *Service {
	def := DefaultConfig()
	if cfg.Providers == nil {
		cfg.Providers = map[string]Provider{}
	}
	if cfg.Tracing.On() {
		cfg.Providers = tracedProviders(cfg.Tracing, cfg.Providers)
	}
	settings.Positive(&cfg.RefundRetry, def.RefundRetry)
	if cfg.RefundRetryMax < cfg.RefundRetry {
		cfg.RefundRetryMax = max(def.RefundRetryMax, cfg.RefundRetry)
	}
	return &Service{db: db, cfg: cfg, now: time.Now}
}

// Outcome says what a verified notification did.
type Outcome string

const (
	OutcomeApplied   Outcome = "applied"   // recorded, with its side effects
	OutcomeDuplicate Outcome = "duplicate" // the same event id was processed before
	OutcomeIgnored   Outcome = "ignored"   // genuine, about nothing this shop acts on
)

var errDuplicateEvent = errors.New("duplicate payment event")

// Notify verifies and applies one provider notification. The provider
// verifies what its protocol signs (signature, key id, timestamp) and reads
// it; then, the same for every provider: merchant, order, currency and
// amount, before anything is written. A verified notification is applied
// in one transaction whose first write is the event id: a repeat of the
// same event stops there and changes nothing. A payment id bound to another
// order is refused inside that transaction, which then rolls back, event
// id included (ErrOtherOrder).
func (s *Service) Notify(ctx context.Context, provider string, header http.Header, body []byte) (Outcome, error) {
	p, ok := s.cfg.Providers[provider]
	if !ok {
		return "", fmt.Errorf("%w: %q", ErrUnknownProvider, provider)
	}
	n, err := p.Verify(Incoming{Header: header, Body: body, Now: s.now(), Tolerance: s.cfg.Tolerance})
	if err != nil {
		return "", err
	}
	if n.Ignore {
		return OutcomeIgnored, nil
	}
	if err := checkNotice(n); err != nil {
		return "", err
	}
	if n.MerchantID != p.Merchant() {
		return "", fmt.Errorf("%w: %q", ErrMerchant, n.MerchantID)
	}
	sum := sha256.Sum256(body)
	digest := hex.EncodeToString(sum[:])
	if n.Refund != nil {
		return s.refundNotice(ctx, p, n, digest)
	}
	return s.apply(ctx, p, n, digest)
}

// Reply is the answer provider expects to a notification that ended with
// err (nil: accepted).
func (s *Service) Reply(provider string, err error) (contentType string, body []byte) {
	p, ok := s.cfg.Providers[provider]
	if !ok {
		return "text/plain; charset=utf-8", []byte("fail")
	}
	msg := ""
	switch {
	case err == nil:
	case errors.Is(err, errs.Unavailable) || errors.Is(store.Classify(err), store.ErrUnavailable):
		msg = "unavailable, retry later"
	default:
		msg = "refused"
	}
	return p.Reply(err == nil, msg)
}

// apply records a verified payment notice for its order: the order checks,
// then one transaction (event id, payment upsert, side effects).
func (s *Service) apply(ctx context.Context, p Provider, n Notice, digest string) (Outcome, error) {
	o, err := s.db.Client.Order.Query().Where(order.OrderSn(n.OrderSn)).Only(ctx)
	if ent.IsNotFound(err) {
		return "", fmt.Errorf("%w: %q", ErrOrderNotFound, n.OrderSn)
	}
	if err != nil {
		return "", store.Classify(err)
	}
	if n.Currency != o.Currency || n.Currency != p.Currency() {
		return "", fmt.Errorf("%w: %q, order %s %q", ErrCurrency, n.Currency, o.OrderSn, o.Currency)
	}
	if n.Amount != o.Amount {
		return "", fmt.Errorf("%w: %s, order %s is %s", ErrAmount, n.Amount, o.OrderSn, o.Amount)
	}
	provider, incoming := p.Name(), n.Status
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		ev, err := recordEvent(ctx, tx, provider, n.EventID, digest)
		if err != nil {
			return err
		}
		pay, err := upsertPayment(ctx, tx, o, provider, n.PaymentID, incoming)
		if err != nil {
			return err
		}
		if err := tx.PaymentEvent.UpdateOneID(ev.ID).SetPaymentRef(pay.ID).Exec(ctx); err != nil {
			return err
		}
		switch pay.Status {
		case enums.PaymentPaid:
			return s.settle(ctx, tx, o, pay)
		case enums.PaymentRefunded:
			// A refund made at the provider refunds the order exactly once
			// too, but only the payment that paid it does: an extra payment's
			// refund ends that payment and leaves the order alone.
			cur, err := tx.Order.Query().Where(order.ID(o.ID)).Select(order.FieldStatus, order.FieldPaidPaymentID).Only(ctx)
			if err != nil {
				return err
			}
			if !paidBy(cur, pay.ID) {
				return nil
			}
			_, err = refundTx(ctx, tx, pay, cur, s)
			return err
		}
		return nil
	})
	return outcome(err)
}

// recordEvent is a notification's first write: a repeat of its event id
// stops at the unique key (errDuplicateEvent).
func recordEvent(ctx context.Context, tx *ent.Tx, provider, eventID, digest string) (*ent.PaymentEvent, error) {
	ev, err := tx.PaymentEvent.Create().SetProvider(provider).SetEventID(eventID).SetPayloadDigest(digest).Save(ctx)
	if ent.IsConstraintError(err) {
		return nil, errDuplicateEvent
	}
	return ev, err
}

// outcome is the Outcome of a notification's transaction that ended with err.
func outcome(err error) (Outcome, error) {
	if errors.Is(err, errDuplicateEvent) {
		return OutcomeDuplicate, nil
	}
	if err != nil {
		return "", store.Classify(err)
	}
	return OutcomeApplied, nil
}

// upsertPayment inserts the payment or merges the incoming state into the
// existing row atomically (INSERT … ON DUPLICATE KEY UPDATE on MySQL,
// ON CONFLICT … DO UPDATE on SQLite). A payment id belongs to the order that
// first named it: when the row is another order's, the merge this statement
// made to it is rolled back with everything else (ErrOtherOrder). The check
// is on the row the upsert wrote, so it holds under a race too: whoever
// inserted the row first owns it.
func upsertPayment(ctx context.Context, tx *ent.Tx, o *ent.Order, provider, paymentID string, incoming enums.PaymentStatus) (*ent.Payment, error) {
	err := tx.Payment.Create().
		SetOrderID(o.ID).SetOrderSn(o.OrderSn).SetProvider(provider).SetPaymentID(paymentID).
		SetAmount(o.Amount).SetCurrency(o.Currency).SetStatus(incoming).
		OnConflict(
			entsql.ConflictColumns(payment.FieldProvider, payment.FieldPaymentID),
			entsql.ResolveWith(func(u *entsql.UpdateSet) {
				u.Set(payment.FieldStatus, entsql.Expr(mergeSQL(incoming)))
				u.Set(payment.FieldVersion, entsql.Expr(payment.Table+"."+payment.FieldVersion+" + 1"))
				u.Set(payment.FieldUpdatedAt, time.Now())
			}),
		).Exec(ctx)
	if err != nil {
		return nil, fmt.Errorf("upserting payment: %w", err)
	}
	p, err := tx.Payment.Query().Where(payment.Provider(provider), payment.PaymentID(paymentID)).Only(ctx)
	if err != nil {
		return nil, err
	}
	if p.OrderID != o.ID {
		return nil, fmt.Errorf("%w: %s/%s, not order %s's", ErrOtherOrder, provider, paymentID, o.OrderSn)
	}
	return p, nil
}

// settle runs the side effects of a payment that is PAID, once per
// payment: the CAS on its paid_at lets a later SUCCESS for it (a new event
// id) run nothing again. What a PAID payment does to its order (pay it, or
// flag it for review when it did not need the money) is the order's
// transition UNPAID → PAID, checkout.PayTx, in this transaction.
func (s *Service) settle(ctx context.Context, tx *ent.Tx, o *ent.Order, pay *ent.Payment) error {
	now := s.now()
	first, err := tx.Payment.Update().
		Where(payment.ID(pay.ID), payment.StatusEQ(enums.PaymentPaid), payment.PaidAtIsNil()).
		SetPaidAt(now).Save(ctx)
	if err != nil || first == 0 {
		return err
	}
	paid, err := checkout.PayTx(ctx, tx, o.ID, checkout.Payer{ID: pay.ID, Provider: pay.Provider, PaymentID: pay.PaymentID, Amount: pay.Amount}, now)
	if err != nil {
		return err
	}
	return bookPaymentTx(ctx, tx, pay, paid)
}

// paidBy reports whether payment paymentID paid order o. A plain read of o
// is enough: paid_payment_id is written once, in the commit that makes the
// order PAID, and that commit precedes any later change to the paying
// payment's row, which the caller's upsert has already waited for. An order
// PAID with no paid_payment_id was paid before the column existed; any of
// its payments counts (the old rule).
func paidBy(o *ent.Order, paymentID int64) bool {
	if o.PaidPaymentID != nil {
		return *o.PaidPaymentID == paymentID
	}
	return o.Status == enums.OrderPaid
}
