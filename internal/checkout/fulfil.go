package checkout

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// An order's fulfilment status says whether units are still to ship:
// PARTIALLY_SHIPPED while some unit has neither shipped nor been refunded
// unshipped (withheld by an after-sale: it never ships), SHIPPED when none
// is left. A shipment decides it as it ships (shipTx); an after-sale moves
// it too, when its refund of unshipped units is confirmed (the last units
// left are gone: SHIPPED) or when it gives withheld units back (rejected or
// cancelled: they are to ship again).

// LockOrderTx takes order orderID's row, the first lock of a transaction
// that may move its fulfilment status after changing its lines (the lock
// order of a shipment: the order, then its lines).
func LockOrderTx(ctx context.Context, tx *ent.Tx, orderID int64) error {
	if _, err := tx.Order.Query().Where(order.ID(orderID)).Modify(store.UpdateLock).IDs(ctx); err != nil {
		return fmt.Errorf("locking order %d: %w", orderID, err)
	}
	return nil
}

// SettleFulfilmentTx moves order orderID PARTIALLY_SHIPPED → SHIPPED when
// every unit has shipped or is withheld, and SHIPPED → PARTIALLY_SHIPPED
// when a unit is to ship again, each by a CAS on the status. The caller
// holds the order's row (LockOrderTx or a CAS on it earlier in tx), so no
// shipment changes the lines meanwhile; the lines are read by a locking
// read, which sees their latest committed state on every engine. A
// COMPLETED order stays COMPLETED: its buyer confirmed receipt.
func SettleFulfilmentTx(ctx context.Context, tx *ent.Tx, orderID int64, now time.Time) error {
	lines, err := tx.OrderLine.Query().Where(orderline.OrderID(orderID)).Order(orderline.ByItemID(), orderline.ByID()).
		Modify(store.UpdateLock).All(ctx)
	if err != nil {
		return fmt.Errorf("reading the lines of order %d: %w", orderID, err)
	}
	left := int64(0)
	for _, l := range lines {
		left += l.Quantity - l.ShippedQuantity - l.WithheldQuantity
	}
	u := tx.Order.Update().Where(order.ID(orderID), order.StatusEQ(enums.OrderPartiallyShipped)).
		SetStatus(enums.OrderShipped).SetShippedAt(now)
	if left > 0 {
		u = tx.Order.Update().Where(order.ID(orderID), order.StatusEQ(enums.OrderShipped)).
			SetStatus(enums.OrderPartiallyShipped).ClearShippedAt()
	}
	n, err := u.AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("settling the fulfilment of order %d: %w", orderID, err)
	}
	if n == 1 {
		slog.InfoContext(ctx, "an after-sale changed what is left to ship", "orderId", orderID, "unitsLeft", left)
	}
	return nil
}
