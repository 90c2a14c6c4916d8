package payments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"

	"storefront/ent/paymentstart"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Unsettled is asked by the timeout closer (checkout.PaymentCheck) before
// it closes the expired orders orderIDs: it asks the provider of each one
// with a started payment what became of it, and returns the orders not to
// close in this pass. A payment the provider reports PAID is applied as its
// notification would have been (the order is paid, not closed: a buyer
// whose notification was lost keeps the order); one the buyer may still be
// completing, or that the provider could not be asked about, keeps its
// order open until DoubtLimit past its expiry. A provider whose payments do
// not expire by themselves (Canceler) has the payment cancelled before the
// order closes.
func (s *Service) Unsettled(ctx context.Context, orderIDs []int64) (map[int64]bool, error) {
	starts, err := s.db.Client.PaymentStart.Query().Where(paymentstart.OrderIDIn(orderIDs...)).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	keep := map[int64]bool{}
	for _, st := range starts {
		p, ok := s.cfg.Providers[st.Provider]
		if !ok {
			continue
		}
		sp := StartedPayment{OrderSn: st.OrderSn, OutTradeNo: st.OutTradeNo, Ref: st.ProviderRef, Amount: st.Amount,
			Currency: st.Currency, ExpiresAt: st.ExpiresAt}
		doubt := s.now().Before(st.ExpiresAt.Add(s.cfg.DoubtLimit))
		q, err := p.Query(ctx, sp)
		if err == nil && q.Status != enums.PaymentPaid && q.Status != enums.PaymentPending {
			if c, ok := p.(Canceler); ok {
				err = c.Cancel(ctx, sp)
			}
		}
		switch {
		case err != nil:
			slog.WarnContext(ctx, "timeout closer: the provider could not be asked about a started payment", "provider", st.Provider,
				"orderSn", st.OrderSn, "kept_open", doubt, "err", err)
			keep[st.OrderID] = keep[st.OrderID] || doubt
		case q.Status == enums.PaymentPaid:
			if _, err := s.applyQueried(ctx, p, st.OrderSn, q); err != nil {
				slog.ErrorContext(ctx, "timeout closer: a payment the provider reports paid was not applied", "provider", st.Provider,
					"orderSn", st.OrderSn, "paymentId", q.PaymentID, "err", err)
			}
			keep[st.OrderID] = true
		case q.Status == enums.PaymentPending:
			keep[st.OrderID] = keep[st.OrderID] || doubt
		}
	}
	return keep, nil
}

// applyQueried applies a payment a query found PAID, as its notification
// would have been, under an event id of its own: a second query of it is
// a duplicate, and the payment's paid_at CAS runs its side effects once
// whichever came first.
func (s *Service) applyQueried(ctx context.Context, p Provider, orderSn string, q Queried) (Outcome, error) {
	n := Notice{EventID: "query:" + q.PaymentID, PaymentID: q.PaymentID, OrderSn: orderSn, MerchantID: p.Merchant(),
		Currency: q.Currency, Amount: q.Amount, Status: enums.PaymentPaid}
	if len(n.EventID) > 64 {
		n.EventID = n.EventID[:64]
	}
	if err := checkNotice(n); err != nil {
		return "", err
	}
	b, _ := json.Marshal(q)
	sum := sha256.Sum256(b)
	return s.apply(ctx, p, n, hex.EncodeToString(sum[:]))
}
