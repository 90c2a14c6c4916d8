package aftersale

import (
	"context"
	"errors"
	"fmt"

	"storefront/ent/aftersale"
	"storefront/ent/refund"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// RefundOrder is refundOrder on the after-sales' mechanism: an admin's
// refund-only after-sale of every unit of the order no after-sale holds,
// approved at once (REQUESTED → APPROVED → REFUNDING in one transaction),
// with the shipping fee when nothing has shipped. An order whose units are
// all held already (a refundOrder at the same moment, a retry) sends its
// REFUNDING after-sales' refunds again instead: two refundOrders at once
// are one refund, and one after a refusal is a new refund (the next
// number). That the order is PAID and none of the units held has shipped is
// decided inside the request's transaction (request's whole): a shipment
// at the same moment either waits for it and finds the units withheld, or
// goes first and the refund is refused with INVALID_ORDER_STATE.
func (s *Service) RefundOrder(ctx context.Context, actor Actor, orderSn, reason string) error {
	if reason == "" || len(reason) > MaxText {
		return fmt.Errorf("%w: a refund reason of 1 to %d characters is required", ErrInvalidInput, MaxText)
	}
	o, err := s.orders.Order(ctx, "", true, orderSn)
	if err != nil {
		return err
	}
	if o == nil {
		return fmt.Errorf("%w: no order %s", ErrNotFound, orderSn)
	}
	var in RequestInput
	for _, l := range o.Lines {
		if left := l.Quantity - l.AfterSaleQuantity; left > 0 {
			in.Lines = append(in.Lines, LineInput{ItemID: l.ItemID, Quantity: left})
		}
	}
	if len(in.Lines) > 0 {
		in = RequestInput{UserID: o.UserID, OrderSn: orderSn, Type: enums.AfterSaleRefundOnly, Lines: in.Lines, Reason: reason}
		a, err := s.request(ctx, in, nil, true)
		switch {
		case err == nil:
			_, err = s.Approve(ctx, actor, a.Sn)
			if cur, gerr := s.get(ctx, a.Sn); err != nil && gerr == nil &&
				(cur.Status == enums.AfterSaleRefunding || cur.Status == enums.AfterSaleRefunded) {
				return nil // a refundOrder at the same moment approved it
			}
			if err != nil {
				// Refused (the order was refunded at the provider meanwhile):
				// nothing moved, and its units go back to the lines.
				_, _ = s.end(ctx, actor, a.Sn, enums.AfterSaleCancelled, "refundOrder: "+err.Error(),
					[]enums.AfterSaleStatus{enums.AfterSaleRequested}, "")
			}
			return err
		case !errors.Is(err, checkout.ErrAfterSaleQuantity):
			return err
		} // another request held the units first: send what is REFUNDING
	}
	open, err := s.db.Client.AfterSale.Query().
		Where(aftersale.OrderID(o.ID), aftersale.StatusIn(enums.AfterSaleRequested, enums.AfterSaleRefunding)).WithLines().All(ctx)
	if err != nil {
		return store.Classify(err)
	}
	for _, r := range open {
		if r.Status == enums.AfterSaleRequested {
			if _, err := s.Approve(ctx, actor, r.AfterSaleSn); err != nil && !errors.Is(err, ErrInvalidState) {
				return err
			}
			continue
		}
		if _, err := s.resend(ctx, toAfterSale(r)); err != nil {
			return err
		}
	}
	return nil
}

// Refunds returns the refund numbers of after-sale sn, oldest first (tests
// and the log).
func (s *Service) Refunds(ctx context.Context, sn string) ([]string, error) {
	a, err := s.get(ctx, sn)
	if err != nil {
		return nil, err
	}
	rows, err := s.db.Client.Refund.Query().Where(refund.AfterSaleID(a.id)).Order(refund.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.RefundNo
	}
	return out, nil
}
