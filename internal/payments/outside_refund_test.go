package payments_test

import (
	"context"
	"testing"
	"time"

	"storefront/ent/refund"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A refund made in the provider's console, not by refundOrder: WeChat Pay's
// REFUND.SUCCESS naming a refund number this shop never sent, of the whole
// payment, refunds the order once (stock restored once); a partial one is
// acknowledged and changes nothing. Stripe's charge.refunded confirms the
// refund this shop has pending for that payment.
func TestRefundsMadeAtTheProvider(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		wx, st := f.stands[0], f.stands[2]
		stock := db.Client.Sku.GetX(ctx, f.itemID).Stock

		o := f.place(t, "console")
		f.pay(t, wx, o, "4200000CONSOLE", "EV-console")
		partial := f.wx.RefundNotice("EV-console-part", "REFUND.SUCCESS", "CONSOLE-1", "4200000CONSOLE", o.OrderSn, int64(o.Amount), 100)
		ph, pbody := f.wx.Notification(partial)
		if code, b := f.post(t, wx.route, ph, pbody); !wx.accepted(code, b) || f.status(o) != enums.OrderPaid {
			t.Errorf("a partial refund made in the console: HTTP %d %q, order %s; want acknowledged and PAID", code, b, f.status(o))
		}
		whole := f.wx.RefundNotice("EV-console-all", "REFUND.SUCCESS", "CONSOLE-2", "4200000CONSOLE", o.OrderSn, int64(o.Amount), int64(o.Amount))
		h, body := f.wx.Notification(whole)
		for range 2 {
			if code, b := f.post(t, wx.route, h, body); !wx.accepted(code, b) {
				t.Fatalf("a refund made in the console: HTTP %d %q", code, b)
			}
		}
		if got := f.status(o); got != enums.OrderRefunded {
			t.Errorf("after the console's whole refund: %s", got)
		}
		if got := db.Client.Sku.GetX(ctx, f.itemID).Stock; got != stock {
			t.Errorf("stock %d, want %d (restored once)", got, stock)
		}

		p := f.place(t, "dashboard")
		f.pay(t, st, p, "pi_DASHBOARD", "evt_dashboard")
		if _, err := f.refund(ctx, p.OrderSn, "pending at Stripe"); err != nil {
			t.Fatal(err)
		}
		r := db.Client.Refund.Query().Where(refund.OrderID(p.ID)).OnlyX(ctx)
		if r.Status != enums.RefundPending {
			t.Fatalf("refund %s, want PENDING", r.Status)
		}
		charge := map[string]any{"id": "ch_1", "object": "charge", "amount": int64(p.Amount), "amount_refunded": int64(p.Amount),
			"currency": "cny", "payment_intent": "pi_DASHBOARD", "refunded": true}
		ch, cbody := f.st.Event("evt_charge_refunded", "charge.refunded", charge, "", "", time.Time{})
		if code, b := f.post(t, st.route, ch, cbody); !st.accepted(code, b) {
			t.Fatalf("charge.refunded: HTTP %d %q", code, b)
		}
		if r := db.Client.Refund.GetX(ctx, r.ID); r.Status != enums.RefundSucceeded || f.status(p) != enums.OrderRefunded {
			t.Errorf("after charge.refunded: refund %s, order %s", r.Status, f.status(p))
		}
	})
}
