package checkout

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// SetOrderAddress gives userID's order orderSn, which has no address yet,
// a copy of the buyer's address addressID: an order of goods
// that ship free, placed without one, must have one before it ships. The
// fee is worked out again for the address from the lines' goods and SKUs
// as they are now: when it differs from the order's (a goods got a
// template since), the order takes it while UNPAID (its amount changes with
// it), and a PAID order is refused (INVALID_ORDER_STATE: its money is
// settled). Only UNPAID and PAID orders, not yet shipped, take an address;
// the change is a CAS on the order's version, so it never overwrites a
// payment, a close or another address that came first.
func (s *Service) SetOrderAddress(ctx context.Context, userID, orderSn string, addressID int64) (*Order, error) {
	for range 3 {
		o, err := s.load(ctx, orderSn)
		if err != nil {
			return nil, err
		}
		switch {
		case o.UserID != userID:
			return nil, fmt.Errorf("%w: order %s is not yours", errs.Forbidden, orderSn)
		case o.Status != enums.OrderUnpaid && o.Status != enums.OrderPaid:
			return nil, fmt.Errorf("%w: order %s is %s; only an UNPAID or PAID order takes an address", ErrInvalidOrderState, orderSn, o.Status)
		case o.ShippingAddress != nil:
			return nil, fmt.Errorf("%w: order %s already ships to %s %s %s", ErrInvalidOrderState, orderSn, o.ShippingAddress.City, o.ShippingAddress.District, o.ShippingAddress.Line)
		}
		a, err := shipping.ReadAddress(ctx, s.db.Client, userID, addressID)
		if err != nil {
			return nil, err
		}
		fee, err := s.feeNow(ctx, o, a)
		if err != nil {
			return nil, err
		}
		amount := o.Amount
		if fee != o.ShippingFee {
			if o.Status != enums.OrderUnpaid {
				return nil, fmt.Errorf("%w: order %s is paid, and shipping to %s would change its shipping fee from %s to %s",
					ErrInvalidOrderState, orderSn, a.RegionCode, o.ShippingFee, fee)
			}
			amount = o.Amount - o.ShippingFee + fee
		}
		var n int
		err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
			n, err = tx.Order.Update().
				Where(order.ID(o.ID), order.Version(o.version), order.StatusEQ(o.Status), order.ShippingAddressIsNil()).
				SetShippingAddress(addressJSON(a)).SetShippingFee(fee).SetAmount(amount).AddVersion(1).Save(ctx)
			if err != nil || n == 0 || fee == o.ShippingFee {
				return err
			}
			return reshipTx(ctx, tx, o, fee)
		})
		if err != nil {
			return nil, store.Classify(err)
		}
		if n == 1 {
			return s.load(ctx, orderSn)
		}
		// Something else changed the order since it was read: read again.
	}
	return nil, fmt.Errorf("%w: order %s kept changing; read it and try again", errs.VersionConflict, orderSn)
}

// feeNow is what o's lines would pay to ship to a now.
func (s *Service) feeNow(ctx context.Context, o *Order, a *shipping.OrderAddress) (money.Money, error) {
	items := make([]shipping.Item, len(o.Lines))
	for i, l := range o.Lines {
		items[i] = shipping.Item{ItemID: l.ItemID, Quantity: l.Quantity, UnitPrice: l.UnitPrice}
	}
	lines, err := shipping.ReadLines(ctx, s.db.Client, items)
	if err != nil {
		return 0, err
	}
	var ids []int64
	for _, l := range lines {
		if l.TemplateID != 0 {
			ids = append(ids, l.TemplateID)
		}
	}
	ts, err := shipping.ReadTemplates(ctx, s.db.Client, ids)
	if err != nil {
		return 0, err
	}
	return shipping.Fee(a.RegionCode, lines, ts)
}
