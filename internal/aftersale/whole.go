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

// RefundOrder is refundOrder (admin): a refund only of every unit of the
// order no after-sale holds, with the shipping fee when nothing has
// shipped, approved at once: REQUESTED → APPROVED → REFUNDING in the one
// transaction that holds the units, reserves the money and writes the
// refund (<after-sale number>-R1, its idempotency key at the provider),
// sent once committed. When the provider confirms it (in its answer or a
// later notification) the after-sale is REFUNDED, the order's refunded
// money reaches what was paid and the order moves to REFUNDED by CAS;
// only that transaction restores the stock and marks the paying payment
// REFUNDED (extra payments stay PAID for a person to refund). A refund the
// provider refuses is FAILED and the order stays PAID; a send whose answer
// was lost stays PENDING and the sweeper sends it again with the same
// number.
//
// The order is read once, here: its state, its lines and the payment that
// paid it are passed along. That it is PAID and none of the units held has
// shipped is decided again inside the transaction (hold's whole): a
// shipment at the same moment either waits for it and finds the units
// withheld, or goes first and the refund is refused with
// INVALID_ORDER_STATE. An order whose units are all held already (a
// refundOrder at the same moment, a retry) sends its REFUNDING
// after-sales' refunds again instead: two refundOrders at once are one
// refund, and one after a refusal is a new refund (the next number). A
// refundOrder of a REFUNDED order changes nothing and answers it.
func (s *Service) RefundOrder(ctx context.Context, actor Actor, orderSn, reason string) (*checkout.Order, error) {
	if err := checkReason(reason); err != nil {
		return nil, err
	}
	o, err := s.orders.Order(ctx, "", true, orderSn)
	if err != nil {
		return nil, err
	}
	switch {
	case o == nil:
		return nil, fmt.Errorf("%w: no order %s", ErrNotFound, orderSn)
	case o.Status == enums.OrderRefunded:
		return o, nil
	case o.Status != enums.OrderPaid && !unguardedWhole:
		return nil, fmt.Errorf("%w: order %s is %s, only PAID orders can be refunded", ErrInvalidState, orderSn, o.Status)
	}
	var lines []LineInput
	for _, l := range o.Lines {
		if left := l.Quantity - l.AfterSaleQuantity; left > 0 {
			lines = append(lines, LineInput{ItemID: l.ItemID, Quantity: left})
		}
	}
	if len(lines) > 0 {
		in := RequestInput{UserID: o.UserID, OrderSn: orderSn, Type: enums.AfterSaleRefundOnly, Lines: lines, Reason: reason}
		_, no, err := s.hold(ctx, o, in, nil, &actor)
		switch {
		case err == nil:
			return s.answer(ctx, orderSn, no)
		case errors.Is(err, checkout.ErrInvalidOrderState):
			// Refunded at the provider meanwhile: a refund of a REFUNDED order.
			if cur, rerr := s.orders.Order(ctx, "", true, orderSn); rerr == nil && cur != nil && cur.Status == enums.OrderRefunded {
				return cur, nil
			}
			return nil, err
		case !errors.Is(err, checkout.ErrAfterSaleQuantity):
			return nil, err
		} // another request held the units first: send what is REFUNDING
	}
	open, err := s.db.Client.AfterSale.Query().
		Where(aftersale.OrderID(o.ID), aftersale.StatusIn(enums.AfterSaleRequested, enums.AfterSaleRefunding)).WithLines().All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, r := range open {
		a := toAfterSale(r)
		if a.Status == enums.AfterSaleRequested {
			if _, err := s.approve(ctx, actor, a, o); err != nil && !errors.Is(err, ErrInvalidState) {
				return nil, err
			}
			continue
		}
		if _, err := s.resend(ctx, a, o); err != nil {
			return nil, err
		}
	}
	return s.answer(ctx, orderSn, "")
}

// answer sends refund no (when there is one) after its transaction
// committed, and answers the order as it is then (REFUNDED already when
// the provider confirmed in its answer).
func (s *Service) answer(ctx context.Context, orderSn, no string) (*checkout.Order, error) {
	if no != "" {
		if err := s.refunds.SendRefund(ctx, no); err != nil {
			return nil, store.Classify(err)
		}
	}
	o, err := s.orders.Order(ctx, "", true, orderSn)
	if err == nil && o == nil {
		err = fmt.Errorf("%w: no order %s", ErrNotFound, orderSn)
	}
	return o, err
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
