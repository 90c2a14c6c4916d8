package payments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/paymentstart"
	"storefront/internal/checkout"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Start starts paying an UNPAID order of the caller at provider. The start
// is recorded before the provider is called, so the timeout closer asks
// the provider about the order even when the provider's answer is lost. The
// payment expires with the order: an order too close to its expiry
// (Config.PayWindow) is not started.
func (s *Service) Start(ctx context.Context, caller auth.Principal, orderSn, provider string) (*Started, error) {
	p, ok := s.cfg.Providers[provider]
	if !ok {
		return nil, fmt.Errorf("%w: unknown provider %q", errs.InvalidInput, provider)
	}
	o, err := s.ownOrder(ctx, caller.UserID, orderSn, s.db.Client.Order.Query().WithLines())
	if err != nil {
		return nil, err
	}
	if o.Status != enums.OrderUnpaid {
		return nil, fmt.Errorf("%w: order %s is %s, only UNPAID orders can be paid", checkout.ErrInvalidOrderState, orderSn, o.Status)
	}
	if o.ExpiresAt.Before(s.now().Add(s.cfg.PayWindow)) {
		return nil, fmt.Errorf("%w: order %s expires at %s, too soon to start a payment", checkout.ErrInvalidOrderState, orderSn, o.ExpiresAt.UTC().Format("15:04:05"))
	}
	if o.Currency != p.Currency() {
		return nil, fmt.Errorf("%w: order %s is in %s, %s takes %s", errs.InvalidInput, orderSn, o.Currency, provider, p.Currency())
	}
	err = s.db.Client.PaymentStart.Create().SetProvider(provider).SetOrderID(o.ID).SetOrderSn(o.OrderSn).
		SetOutTradeNo(o.OrderSn).SetAmount(o.Amount).SetCurrency(o.Currency).SetExpiresAt(o.ExpiresAt).
		OnConflict(entsql.ConflictColumns(paymentstart.FieldProvider, paymentstart.FieldOrderID), entsql.ResolveWithIgnore()).Exec(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("recording the start of a payment: %w", err))
	}
	st, err := p.Start(ctx, StartOrder{OrderSn: o.OrderSn, Amount: o.Amount, Currency: o.Currency, Subject: subject(o), ExpiresAt: o.ExpiresAt})
	if err != nil {
		if !errors.Is(err, ErrRefused) && !errors.Is(err, errs.Unavailable) {
			err = fmt.Errorf("%w: %w", ErrProvider, err)
		}
		slog.WarnContext(ctx, "payment not started", "provider", provider, "orderSn", orderSn, "err", err)
		return nil, err
	}
	if st.Ref != "" {
		err := s.db.Client.PaymentStart.Update().Where(paymentstart.Provider(provider), paymentstart.OrderID(o.ID)).
			SetProviderRef(st.Ref).Exec(ctx)
		if err != nil {
			return nil, store.Classify(err)
		}
	}
	st.Provider, st.OutTradeNo, st.ExpiresAt = provider, o.OrderSn, o.ExpiresAt
	return &st, nil
}

// subject is the line a buyer sees at the provider: the first goods' name.
func subject(o *ent.Order) string {
	name := "Order " + o.OrderSn
	if len(o.Edges.Lines) > 0 {
		name = o.Edges.Lines[0].GoodsName
		if len(o.Edges.Lines) > 1 {
			name += fmt.Sprintf(" +%d", len(o.Edges.Lines)-1)
		}
	}
	// WeChat Pay's description and Alipay's subject: at most 127 and 256 bytes.
	for len(name) > 120 {
		r := []rune(name)
		name = string(r[:len(r)-1])
	}
	return name
}
