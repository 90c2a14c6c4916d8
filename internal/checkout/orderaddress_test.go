package checkout

import (
	"context"
	"errors"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// setOrderAddress gives an order placed without an address a copy of one:
// only its owner's, only while UNPAID or PAID, once; the fee follows the
// address before payment, and after it only when it stays what it is.
func TestSetOrderAddress(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		home := f.addr(t, "u1", "310104")
		whiteM := f.skuID(t, "白色,M")
		place := func() *Order {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(whiteM, 1)}, IdempotencyKey: newKey()})
			if err != nil {
				t.Fatal(err)
			}
			return o
		}
		o := place()
		if _, err := f.svc.SetOrderAddress(ctx, "u2", o.OrderSn, home); !errors.Is(err, errs.Forbidden) {
			t.Errorf("someone else: %v", err)
		}
		if _, err := f.svc.SetOrderAddress(ctx, "u1", o.OrderSn, home+1000); !errors.Is(err, errs.NotFound) {
			t.Errorf("an unknown address: %v", err)
		}
		got, err := f.svc.SetOrderAddress(ctx, "u1", o.OrderSn, home)
		if err != nil || got.ShippingAddress == nil || got.ShippingAddress.RegionCode != "310104" || got.ShippingFee != 0 || got.Amount != o.Amount {
			t.Fatalf("set: %+v, %v", got, err)
		}
		if _, err := f.svc.SetOrderAddress(ctx, "u1", o.OrderSn, home); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a second address: %v", err)
		}

		// The T-shirt moves under a template after its orders were placed.
		per := f.newTemplate(t, enums.ChargeByPiece, shipping.Rule{RegionCodes: []string{"*"}, FirstUnits: 1, FirstFee: m("12.00"), NextUnits: 1, NextFee: m("2.00")})
		unpaid, paid := place(), place()
		f.pay(t, paid.ID, Payer{ID: paid.ID, Provider: "mock", PaymentID: "p", Amount: paid.Amount})
		f.underTemplate(t, f.ids["DEMO-TSHIRT"], per)
		got, err = f.svc.SetOrderAddress(ctx, "u1", unpaid.OrderSn, home)
		if err != nil || got.ShippingFee != m("12.00") || got.Amount != unpaid.Amount+m("12.00") {
			t.Errorf("an unpaid order whose fee changes: %+v, %v; want fee 12.00 and the amount with it", got, err)
		}
		// The fee is its SHIPPING adjustment, rows and all: read back, the
		// adjustments still sum to the amount.
		if got != nil {
			sum := got.Subtotal
			var fee money.Money
			for _, a := range got.Adjustments {
				sum += a.Amount
				if a.Kind == enums.AdjustShipping {
					fee += a.Amount
				}
			}
			if fee != m("12.00") || sum != got.Amount {
				t.Errorf("adjustments %+v: shipping %s, subtotal + adjustments %s; want 12.00 and the amount %s", got.Adjustments, fee, sum, got.Amount)
			}
		}
		if _, err := f.svc.SetOrderAddress(ctx, "u1", paid.OrderSn, home); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a paid order whose fee would change: %v", err)
		}
		if p := f.order(t, paid.OrderSn); p.ShippingAddress != nil || p.Amount != paid.Amount {
			t.Errorf("the refused paid order changed: %+v", p)
		}
		f.underTemplate(t, f.ids["DEMO-TSHIRT"], 0)
		if got, err := f.svc.SetOrderAddress(ctx, "u1", paid.OrderSn, home); err != nil || got.ShippingAddress == nil || got.Amount != paid.Amount {
			t.Errorf("a paid order whose fee stays: %+v, %v", got, err)
		}
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: paid.OrderSn, Carrier: "SF", TrackingNo: "T"}); err != nil {
			t.Errorf("shipping it then: %v", err)
		}
		closed := place()
		if _, err := f.svc.CancelOrder(ctx, "u1", false, closed.OrderSn); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.SetOrderAddress(ctx, "u1", closed.OrderSn, home); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a closed order: %v", err)
		}
	})
}
