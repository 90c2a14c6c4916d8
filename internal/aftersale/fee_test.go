package aftersale_test

import (
	"testing"

	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
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
