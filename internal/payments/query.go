package payments

import (
	"context"
	"fmt"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/ent/refund"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Return records what the success page learned from the redirect: a
// PENDING payment if none exists. It never changes an existing payment and
// is never proof of payment; only a verified notification is.
func (s *Service) Return(ctx context.Context, caller auth.Principal, provider, paymentID, orderSn string) (*Payment, error) {
	if _, ok := s.cfg.Providers[provider]; !ok {
		return nil, fmt.Errorf("%w: unknown provider %q", errs.InvalidInput, provider)
	}
	if paymentID == "" || len(paymentID) > 64 {
		return nil, fmt.Errorf("%w: paymentId must be 1 to 64 characters", errs.InvalidInput)
	}
	o, err := s.ownOrder(ctx, caller.UserID, orderSn, s.db.Client.Order.Query())
	if err != nil {
		return nil, err
	}
	err = s.db.Client.Payment.Create().
		SetOrderID(o.ID).SetOrderSn(o.OrderSn).SetProvider(provider).SetPaymentID(paymentID).
		SetAmount(o.Amount).SetCurrency(o.Currency).SetStatus(enums.PaymentPending).
		OnConflict(entsql.ConflictColumns(payment.FieldProvider, payment.FieldPaymentID), entsql.ResolveWithIgnore()).
		Exec(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("recording redirect: %w", err))
	}
	p, err := s.db.Client.Payment.Query().Where(payment.Provider(provider), payment.PaymentID(paymentID)).Only(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	if p.OrderID != o.ID {
		// The insert above never touches an existing row, so the row read
		// here is whichever order named this payment id first.
		return nil, fmt.Errorf("%w: %w: %s/%s", errs.InvalidInput, ErrOtherOrder, provider, paymentID)
	}
	return view(p), nil
}

// ForOrder returns the payment that paid the order (REFUNDED once it was
// refunded). An order no payment paid (unpaid, closed, or paid before
// orders named their paying payment) gets the payment that best describes
// it: a settled one (PAID, REFUNDED) before a pending or failed one; nil
// when none exists.
func (s *Service) ForOrder(ctx context.Context, orderID int64) (*Payment, error) {
	o, err := s.db.Client.Order.Query().Where(order.ID(orderID)).Select(order.FieldPaidPaymentID).Only(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	rows, err := s.db.Client.Payment.Query().Where(payment.OrderID(orderID)).Order(ent.Desc(payment.FieldID)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	rank := map[enums.PaymentStatus]int{enums.PaymentPaid: 0, enums.PaymentRefunded: 1, enums.PaymentPending: 2, enums.PaymentFailed: 3}
	var best *ent.Payment
	for _, p := range rows {
		if o.PaidPaymentID != nil && p.ID == *o.PaidPaymentID {
			return view(p), nil
		}
		if best == nil || rank[p.Status] < rank[best.Status] {
			best = p
		}
	}
	if best == nil {
		return nil, nil
	}
	return view(best), nil
}

// OfOrder returns every payment of an order, oldest first: the paying one
// and any extra money a person has to refund.
func (s *Service) OfOrder(ctx context.Context, orderID int64) ([]*Payment, error) {
	rows, err := s.db.Client.Payment.Query().Where(payment.OrderID(orderID)).Order(ent.Asc(payment.FieldID)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	out := make([]*Payment, len(rows))
	for i, p := range rows {
		out[i] = view(p)
	}
	return out, nil
}

func view(p *ent.Payment) *Payment {
	return &Payment{Provider: p.Provider, PaymentID: p.PaymentID, Status: p.Status, Amount: p.Amount, Currency: p.Currency}
}

// RefundView is a refund as clients see it; the GraphQL type Refund binds to it.
type RefundView struct {
	RefundNo  string
	Provider  string
	Amount    money.Money
	Currency  string
	Status    enums.RefundStatus
	Reason    string
	Failure   string
	CreatedAt time.Time
}

// RefundsOf returns the refunds sent for an order, oldest first.
func (s *Service) RefundsOf(ctx context.Context, orderID int64) ([]*RefundView, error) {
	rows, err := s.db.Client.Refund.Query().Where(refund.OrderID(orderID)).Order(ent.Asc(refund.FieldID)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	out := make([]*RefundView, len(rows))
	for i, r := range rows {
		out[i] = &RefundView{RefundNo: r.RefundNo, Provider: r.Provider, Amount: r.Amount, Currency: r.Currency,
			Status: r.Status, Reason: r.Reason, Failure: r.Failure, CreatedAt: r.CreatedAt}
	}
	return out, nil
}

// ownOrder reads order orderSn through q, the caller's own or an error
// (ErrOrderNotFound, FORBIDDEN for another customer's).
func (s *Service) ownOrder(ctx context.Context, user, orderSn string, q *ent.OrderQuery) (*ent.Order, error) {
	o, err := q.Where(order.OrderSn(orderSn)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: %q", ErrOrderNotFound, orderSn)
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	if o.UserID != user {
		return nil, fmt.Errorf("%w: order %s belongs to another user", errs.Forbidden, orderSn)
	}
	return o, nil
}
