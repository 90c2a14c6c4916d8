package resolvers_test

import (
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// An order with a coupon says its money as subtotal and adjustments over
// GraphQL: one COUPON adjustment naming the customer's coupon, its line
// shares summing to it, and amount = subtotal + Σ adjustments.
func TestOrderAdjustmentsOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		p := newPromoAPI(t, db, "bob")
		uc := struct{ ID string }{p.claimedCoupon("bob", "10 off", "10.00")}
		sn, _, code := p.place("bob", uc.ID)
		if code != "" {
			t.Fatalf("placeOrder: %s", code)
		}
		var o struct {
			Subtotal, Amount, Discount, ShippingFee string
			Adjustments                             []struct {
				Kind     string
				SourceID *string
				Label    string
				Amount   string
				Lines    []struct{ ItemID, Amount string }
			}
		}
		q := `query($sn: String!) { order(orderSn: $sn) { subtotal amount discount shippingFee adjustments { kind sourceId label amount lines { itemId amount } } } }`
		if a := p.do(p.tokens["bob"], q, map[string]any{"sn": sn}, "order", &o); a.Code() != "" {
			t.Fatalf("order: %+v", a)
		}
		if o.Subtotal != "199.00" || o.Amount != "189.00" || o.Discount != "10.00" || o.ShippingFee != "0.00" || len(o.Adjustments) != 1 {
			t.Fatalf("order money %+v", o)
		}
		a := o.Adjustments[0]
		if a.Kind != "COUPON" || a.SourceID == nil || *a.SourceID != uc.ID || a.Label != "10 off" || a.Amount != "-10.00" ||
			len(a.Lines) != 1 || a.Lines[0].ItemID != p.item || a.Lines[0].Amount != "-10.00" {
			t.Fatalf("adjustment %+v (source %v), want COUPON of user coupon %s, -10.00 on item %s", a, a.SourceID, uc.ID, p.item)
		}
	})
}
