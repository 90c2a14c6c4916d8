package aftersale_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/ent/orderline"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Three one-unit shipments and a refundOrder of a paid order of 3 units,
// sent at the same moment, round after round: either the refund wins (the
// order REFUNDED, nothing shipped, every shipment refused) or a shipment
// does (the refund refused with INVALID_ORDER_STATE, nothing refunded).
// The whole refund's state check ran outside its transaction and its
// holds took shipped units: 17 of 20 rounds ended REFUNDED with units
// shipped on MariaDB and PostgreSQL.
func TestRefundOrderRacingShipments(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		refunds := 0
		for round := range 12 {
			o := f.shippable(t, item, 3, fmt.Sprint("ship-race-", round))
			var wg sync.WaitGroup
			start := make(chan struct{})
			var refundErr error
			shipErrs := make([]error, 3)
			for i := range shipErrs {
				wg.Go(func() {
					<-start
					_, shipErrs[i] = f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF",
						TrackingNo: fmt.Sprint("SF", round, i), Lines: []checkout.ShipLine{{ItemID: item, Quantity: 1}}})
				})
			}
			wg.Go(func() {
				<-start
				_, refundErr = f.as.RefundOrder(ctx, admin, o.OrderSn, "race")
			})
			close(start)
			wg.Wait()

			cur := f.order(t, o.OrderSn)
			l := db.Client.OrderLine.Query().Where(orderline.OrderID(o.ID)).OnlyX(ctx)
			shipped := 0
			for _, err := range shipErrs {
				if err == nil {
					shipped++
				}
			}
			if int64(shipped) != l.ShippedQuantity {
				t.Errorf("round %d: %d shipments answered success, the line shows %d shipped", round, shipped, l.ShippedQuantity)
			}
			if l.ShippedQuantity+l.WithheldQuantity > l.Quantity {
				t.Errorf("round %d: %d shipped and %d refunded unshipped of %d", round, l.ShippedQuantity, l.WithheldQuantity, l.Quantity)
			}
			switch {
			case refundErr == nil:
				refunds++
				if cur.Status != enums.OrderRefunded || cur.RefundedAmount != cur.Amount || l.ShippedQuantity != 0 {
					t.Errorf("round %d: the refund answered success; the order is %s, %s of %s refunded, %d units shipped",
						round, cur.Status, cur.RefundedAmount, cur.Amount, l.ShippedQuantity)
				}
			case errors.Is(refundErr, checkout.ErrInvalidOrderState):
				if cur.RefundedAmount != 0 || l.ShippedQuantity == 0 || l.AfterSaleQuantity != 0 {
					t.Errorf("round %d: the refund was refused (%v); %s refunded, %d shipped, %d in after-sales",
						round, refundErr, cur.RefundedAmount, l.ShippedQuantity, l.AfterSaleQuantity)
				}
			default:
				t.Errorf("round %d: refundOrder: %v", round, refundErr)
			}
			if max := money.Money(l.Quantity-l.ShippedQuantity) * l.UnitPrice; cur.RefundedAmount > max {
				t.Errorf("round %d: %s refunded for %d unshipped units of %s", round, cur.RefundedAmount, l.Quantity-l.ShippedQuantity, l.UnitPrice)
			}
		}
		t.Logf("%d of 12 rounds refunded, the rest shipped", refunds)
		f.clean(t)
	})
}
