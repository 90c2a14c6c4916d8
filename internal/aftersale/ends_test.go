package aftersale_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"storefront/ent/aftersalelog"
	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// The provider's word that the whole payment was refunded, while a buyer's
// after-sale of the order waits REQUESTED: the order is REFUNDED and the
// after-sale ends CANCELLED with why, its units back on the line. It stayed
// REQUESTED for good (approving it answered INVALID_ORDER_STATE).
func TestProviderRefundEndsOpenAfterSales(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 2, f.items[0])
		a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
		n := mock.Notification{EventID: "ev-whole-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn, Amount: o.Amount.String(),
			Currency: "CNY", MerchantID: "m-1", Status: "REFUNDED", Timestamp: time.Now().Unix()}
		body, _ := json.Marshal(n)
		if _, err := f.pay.Notify(ctx, "mock", mock.Header(mock.Sign(secret, body)), body); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, o.OrderSn); got.Status != enums.OrderRefunded {
			t.Fatalf("order %s after the provider refunded it whole, want REFUNDED", got.Status)
		}
		got, err := f.as.Get(ctx, admin, a.Sn)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != enums.AfterSaleCancelled {
			t.Errorf("after-sale %s is %s, want CANCELLED", a.Sn, got.Status)
		}
		logged, err := db.Client.AfterSaleLog.Query().Where(aftersalelog.ToStatus(string(enums.AfterSaleCancelled))).Only(ctx)
		if err != nil || logged.Note == "" {
			t.Errorf("the cancellation's log row: %v %+v; want one saying why", err, logged)
		}
		if q, w := f.lineOf(t, o, f.items[0]); q != 0 || w != 0 {
			t.Errorf("the line holds %d units in after-sales (%d withheld), want 0", q, w)
		}
		f.clean(t)
	})
}

// One of three units shipped, then a refund only of the two that had not:
// once the refund is confirmed nothing is left to ship and the order is
// SHIPPED (it stayed PARTIALLY_SHIPPED for good, never completed). A
// rejected refund of the last units gives them back to ship: the order
// stays PARTIALLY_SHIPPED.
func TestRefundOfTheUnitsLeftToShipMovesTheOrderOn(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		for i, decide := range []string{"reject", "approve"} {
			o := f.shippable(t, item, 3, fmt.Sprint("left-", i))
			if _, err := f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: fmt.Sprint("SF-left-", i),
				Lines: []checkout.ShipLine{{ItemID: item, Quantity: 1}}}); err != nil {
				t.Fatal(err)
			}
			a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 2})
			want := enums.OrderShipped
			if decide == "reject" {
				want = enums.OrderPartiallyShipped
				if _, err := f.as.Reject(ctx, admin, a.Sn, "no"); err != nil {
					t.Fatal(err)
				}
			} else if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
				t.Fatal(err)
			}
			got := f.order(t, o.OrderSn)
			if got.Status != want {
				t.Errorf("%s: the order is %s, want %s", decide, got.Status, want)
			}
			if decide == "approve" && (got.RefundedAmount != 2*got.Lines[0].UnitPrice || got.ShippedAt == nil) {
				t.Errorf("approve: %s refunded, shipped at %v; want two units' price and a time", got.RefundedAmount, got.ShippedAt)
			}
			if decide == "reject" {
				if _, err := f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: fmt.Sprint("SF-rest-", i)}); err != nil {
					t.Fatalf("shipping what the rejected after-sale gave back: %v", err)
				}
				if got := f.order(t, o.OrderSn); got.Status != enums.OrderShipped {
					t.Errorf("after shipping the rest: %s, want SHIPPED", got.Status)
				}
			}
		}
		f.clean(t)
	})
}

// An after-sale withholding the last unit while the rest ships leaves the
// order SHIPPED (nothing left to ship); rejected, its unit is to ship
// again and the order goes back to PARTIALLY_SHIPPED.
func TestRejectedRefundOfAShippedOrderReopensIt(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		o := f.shippable(t, item, 2, "reopen")
		a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 1})
		if _, err := f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "SF-1"}); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, o.OrderSn); got.Status != enums.OrderShipped {
			t.Fatalf("one shipped, one withheld: %s, want SHIPPED", got.Status)
		}
		if _, err := f.as.Reject(ctx, admin, a.Sn, "no"); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, o.OrderSn); got.Status != enums.OrderPartiallyShipped || got.ShippedAt != nil {
			t.Errorf("after the rejection: %s shipped at %v, want PARTIALLY_SHIPPED with no time", got.Status, got.ShippedAt)
		}
		if _, err := f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "SF-2"}); err != nil {
			t.Errorf("shipping the unit given back: %v", err)
		}
		if _, err := f.as.Approve(ctx, admin, a.Sn); !errors.Is(err, as.ErrInvalidState) {
			t.Errorf("approving the rejected after-sale: %v", err)
		}
	})
}

// Two refunds only of a line of 3 with 1 shipped: the first withholds 1 of
// the 2 unshipped units, the second (2 units) only the 1 left unshipped;
// the other is a shipped unit the buyer keeps. Counting the first's
// withheld unit as still unshipped, the line withheld 3 with 1 shipped.
func TestRefundsWithholdOnlyUnitsNotYetWithheld(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		o := f.shippable(t, item, 3, "withhold")
		f.shipOne(t, o, item, "SF-w")
		f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 1})
		f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 2})
		if q, w := f.lineOf(t, o, item); q != 3 || w != 2 {
			t.Errorf("the line holds %d units in after-sales, %d of them withheld; want 3 and 2 (1 shipped)", q, w)
		}
	})
}
