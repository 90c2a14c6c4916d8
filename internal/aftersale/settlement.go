package aftersale

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"storefront/ent"
	"storefront/ent/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/payments"
	"storefront/internal/vocab/enums"
)

// Settlement is what a refund's settling decides beyond payments' rows
// (payments.Settlement, which internal/app wires to it): the after-sale a
// confirmed refund ends, and the order a payment refunded whole refunds.
// It runs inside payments' settling transaction, which holds the paying
// payment's row, the first lock of every refund.
type Settlement struct{}

var _ payments.Settlement = Settlement{}

// RefundedWholeTx is the Refund transition of order orderID, whose paying
// payment went back whole with no after-sale's refund (at the provider):
// REFUNDED by CAS and its open after-sales ended; an order the transition
// cannot take (units shipped, part refunded already) is flagged for a
// person. It reports whether the order was refunded (payments then marks
// its payment REFUNDED).
func (Settlement) RefundedWholeTx(ctx context.Context, tx *ent.Tx, orderID int64, now time.Time) (bool, error) {
	won, err := checkout.CloseTx(ctx, tx, orderID, checkout.Refund, now)
	if err != nil {
		return false, err
	}
	if !won {
		return false, checkout.FlagRefundedOutsideTx(ctx, tx, orderID)
	}
	return true, endOpenTx(ctx, tx, orderID, "the order was refunded in full at the provider", now)
}

// RefundedTx is REFUNDING → REFUNDED for after-sale id, in payments'
// transaction that confirmed its refund (the paying payment's row held):
// the order's refunded money raised by checkout's CAS, and for a refund
// only the units that never shipped restored. It reports whether the order
// is now wholly refunded (payments then marks its payment REFUNDED).
func (Settlement) RefundedTx(ctx context.Context, tx *ent.Tx, id int64, now time.Time) (bool, error) {
	r, err := tx.AfterSale.Query().Where(aftersale.ID(id)).WithLines().Only(ctx)
	if err != nil {
		return false, fmt.Errorf("reading after-sale %d: %w", id, err)
	}
	a := toAfterSale(r)
	withheld := func(l *Line) int64 { return l.withheld }
	if a.Type == enums.AfterSaleRefundOnly {
		if err := inventory.LockGoods(ctx, tx, goodsOf(a.Lines)...); err != nil {
			return false, err
		}
	}
	ok, err := move(ctx, tx, id, enums.AfterSaleRefunding, enums.AfterSaleRefunded, "provider", "", now, nil)
	if err != nil || !ok {
		return false, err
	}
	whole, err := checkout.ConfirmRefundTx(ctx, tx, a.orderID, a.Amount, now)
	if err != nil {
		return false, err
	}
	if a.Type == enums.AfterSaleRefundOnly {
		if err := restore(ctx, tx, a, withheld); err != nil {
			return false, err
		}
	}
	switch {
	case whole:
		// Nothing is left to refund: the order's other open after-sales end.
		if err := endOpenTx(ctx, tx, a.orderID, "the order was refunded in full by after-sale "+a.Sn, now); err != nil {
			return false, err
		}
	case a.withheldAny():
		// Its units never ship: they may have been the last ones to ship.
		// ConfirmRefundTx's CAS holds the order's row.
		if err := checkout.SettleFulfilmentTx(ctx, tx, a.orderID, now); err != nil {
			return false, err
		}
	}
	a.Status = enums.AfterSaleRefunded
	return whole, checkout.Emit(ctx, tx, EventAfterSaleRefunded, a.OrderSn, payloadOf(a), now)
}

// open are the statuses of an after-sale no money has moved for yet.
var open = []enums.AfterSaleStatus{enums.AfterSaleRequested, enums.AfterSaleApproved, enums.AfterSaleReturnShipped}

// endOpenTx cancels every open after-sale of order orderID, each by its
// CAS with a log row saying why (note), and gives their units back to the
// lines: the order can no longer be refunded (refunded in full, here or at
// the provider), so they could never end otherwise. It runs in the
// transaction that refunded the order, which holds the order's row.
func endOpenTx(ctx context.Context, tx *ent.Tx, orderID int64, note string, now time.Time) error {
	rows, err := tx.AfterSale.Query().Where(aftersale.OrderID(orderID), aftersale.StatusIn(open...)).
		Order(aftersale.ByID()).WithLines().All(ctx)
	if err != nil {
		return fmt.Errorf("reading the open after-sales of order %d: %w", orderID, err)
	}
	for _, r := range rows {
		a := toAfterSale(r)
		ok, err := move(ctx, tx, a.id, a.Status, enums.AfterSaleCancelled, "system", note, now, nil)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if a.Status == enums.AfterSaleReturnShipped {
			slog.WarnContext(ctx, "a return on its way back was cancelled: its order was refunded in full; receive the parcel by hand",
				"afterSaleSn", a.Sn, "orderSn", a.OrderSn)
		}
		if err := releaseLines(ctx, tx, a); err != nil {
			return err
		}
	}
	return nil
}
