package aftersale_test

import (
	"fmt"
	"sync"
	"testing"

	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// An order with a shipping fee: a refund only of part of it leaves the fee,
// one of the rest (nothing shipped) refunds it too. The fee rule's read of
// the order's lines once panicked on every refund only of such an order
// (an edge query from a bare &ent.Order had no driver).
func TestRefundOnlyOfAnOrderWithAFee(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		item := f.items[0]
		o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: "buyer-1", IdempotencyKey: "fee-1",
			Items: []checkout.ItemInput{{ItemID: &item, Quantity: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		// The demo T-shirt ships free: give this order a fee of 6.00 before paying it.
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET shipping_fee = 600, amount = amount + 600 WHERE id = ?", o.ID); err != nil {
			t.Fatal(err)
		}
		o = f.pays(t, o)
		unit := o.Lines[0].UnitPrice
		part := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
		if part.Amount != unit || part.ShippingFee != 0 {
			t.Errorf("one unit of two: amount %s (fee %s), want %s and no fee", part.Amount, part.ShippingFee, unit)
		}
		rest := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
		if rest.ShippingFee != 600 || rest.Amount != unit+600 {
			t.Errorf("the last unit: amount %s (fee %s), want %s + 6.00", rest.Amount, rest.ShippingFee, unit)
		}
	})
}

// Two refund-only requests racing for the two lines of an unshipped order
// with a fee: whichever comes second gives the fee back, in every round.
// Without the lines locked before the holds (lockForFee), each read the
// other's line before its hold and neither gave it back.
func TestRacingRefundsOfTheLastUnitsGiveTheFeeBackOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		for round := range 8 {
			var in []checkout.ItemInput
			for _, id := range f.items {
				in = append(in, checkout.ItemInput{ItemID: &id, Quantity: 1})
			}
			o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: "buyer-1", IdempotencyKey: fmt.Sprint("fee-race-", round), Items: in})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET shipping_fee = 600, amount = amount + 600 WHERE id = ?", o.ID); err != nil {
				t.Fatal(err)
			}
			o = f.pays(t, o)
			fees := make([]money.Money, len(f.items))
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i, id := range f.items {
				wg.Go(func() {
					<-start
					a, err := f.as.Request(ctx, as.RequestInput{UserID: o.UserID, OrderSn: o.OrderSn, Type: enums.AfterSaleRefundOnly,
						Lines: []as.LineInput{{ItemID: id, Quantity: 1}}, Reason: "race"})
					if err != nil {
						t.Errorf("round %d, line %d: %v", round, i, err)
						return
					}
					fees[i] = a.ShippingFee
				})
			}
			close(start)
			wg.Wait()
			if fees[0]+fees[1] != 600 {
				t.Errorf("round %d: the two requests gave back fees %v; want 6.00 once", round, fees)
			}
		}
	})
}
