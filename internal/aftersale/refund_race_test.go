package aftersale_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/ent/aftersale"
	"storefront/ent/orderline"
	"storefront/ent/refund"
	as "storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// A buyer's refund of one line approved at the moment an admin refunds
// the order: both refunds go out, one per after-sale, each taking the
// paying payment's row first and reserving its money by the order's CAS;
// together they return exactly what was paid and the order is REFUNDED.
func TestRefundOrderRacingAnApproval(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		for round := range 6 {
			o := f.paid(t, fmt.Sprint("buyer-race-", round), 1, f.items[0], f.items[1])
			asked := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
			var wg sync.WaitGroup
			start := make(chan struct{})
			var approveErr, refundErr error
			wg.Go(func() { <-start; _, approveErr = f.as.Approve(ctx, admin, asked.Sn) })
			wg.Go(func() { <-start; _, refundErr = f.as.RefundOrder(ctx, admin, o.OrderSn, "race") })
			close(start)
			wg.Wait()
			if approveErr != nil || refundErr != nil {
				t.Fatalf("round %d: approve %v, refundOrder %v", round, approveErr, refundErr)
			}
			cur := f.order(t, o.OrderSn)
			if cur.Status != enums.OrderRefunded || cur.RefundedAmount != cur.Amount {
				t.Errorf("round %d: order %s with %s of %s refunded, want REFUNDED with all of it", round, cur.Status, cur.RefundedAmount, cur.Amount)
			}
			n := db.Client.Refund.Query().Where(refund.OrderID(o.ID), refund.StatusEQ(enums.RefundSucceeded)).CountX(ctx)
			sales := db.Client.AfterSale.Query().Where(aftersale.OrderID(o.ID), aftersale.StatusEQ(enums.AfterSaleRefunded)).CountX(ctx)
			if n != 2 || sales != 2 {
				t.Errorf("round %d: %d refunds succeeded for %d after-sales refunded, want 2 and 2", round, n, sales)
			}
		}
		f.clean(t)
	})
}

// refundOrder of an order paid through a provider this server no longer
// has is refused before anything is written: the check is in the
// transaction that would hold the units and open the refund, so its
// refusal rolls them back, and no after-sale is left to cancel.
func TestRefundOrderThroughAProviderNotConfigured(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 1, f.items[0])
		_, _, without := app.Orders(db, checkout.DefaultConfig(), payments.DefaultConfig(), as.DefaultConfig())
		if _, err := without.RefundOrder(ctx, admin, o.OrderSn, "no provider"); !errors.Is(err, errs.InvalidInput) {
			t.Fatalf("refundOrder through a provider not configured: %v, want INVALID_INPUT", err)
		}
		if n := db.Client.AfterSale.Query().Where(aftersale.OrderID(o.ID)).CountX(ctx); n != 0 {
			t.Errorf("%d after-sales written, want none", n)
		}
		if n := db.Client.Refund.Query().Where(refund.OrderID(o.ID)).CountX(ctx); n != 0 {
			t.Errorf("%d refunds written, want none", n)
		}
		if held := db.Client.OrderLine.Query().Where(orderline.OrderID(o.ID)).FirstX(ctx).AfterSaleQuantity; held != 0 {
			t.Errorf("%d units held, want none", held)
		}
		if cur := f.order(t, o.OrderSn); cur.Status != enums.OrderPaid {
			t.Errorf("order %s, want PAID", cur.Status)
		}
		// And the server that has the provider refunds it.
		if got, err := f.as.RefundOrder(ctx, admin, o.OrderSn, "with the provider"); err != nil || got.Status != enums.OrderRefunded {
			t.Fatalf("refundOrder: %v %v", got, err)
		}
	})
}
