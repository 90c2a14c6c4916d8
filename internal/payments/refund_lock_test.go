package payments_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"storefront/ent/payment"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// An admin's refund and the provider's REFUNDED notification for the same
// paid order, at the same moment, for many orders one after another: each order is refunded
// once (its stock restored once, its payment REFUNDED), both callers are
// answered without an error, and no transaction even deadlocks: both take
// the paying payment's row first, then the order's. At 52fadce the admin's
// refund took the order's row first and the payment's last, the provider's
// the other way round (its upsert holds the payment): they deadlocked, and
// one of them ran again (27 retried deadlocks on MariaDB and 22 on
// PostgreSQL in 30 pairs).
func TestAdminAndProviderRefundsDoNotDeadlock(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		const pairs = 30
		var deadlocks atomic.Int64
		old := store.OnRetry
		store.OnRetry = func(cause string) {
			if cause != "busy" {
				deadlocks.Add(1)
			}
		}
		t.Cleanup(func() { store.OnRetry = old })
		stock := db.Client.Sku.GetX(ctx, f.itemID).Stock
		var wg sync.WaitGroup
		for i := range pairs {
			o := f.place(t, fmt.Sprint("refund-race-", i))
			pid := fmt.Sprint("P-", i)
			if c := f.notify(t, "mock", success(o, "ev-pay-"+pid, pid), ""); c != 200 {
				t.Fatalf("SUCCESS %s: HTTP %d", pid, c)
			}
			start := make(chan struct{})
			wg.Go(func() {
				<-start
				if _, err := f.refund(ctx, o.OrderSn, "the buyer asked"); err != nil {
					t.Errorf("admin refund of %s: %v", o.OrderSn, err)
				}
			})
			wg.Go(func() {
				<-start
				body, sig := signed(refunded(o, "ev-refund-"+pid, pid))
				if out, err := f.svc.Notify(ctx, "mock", mock.Header(sig), body); err != nil || out != payments.OutcomeApplied {
					t.Errorf("provider refund of %s: %v, %v", o.OrderSn, out, err)
				}
			})
			close(start)
			// One pair at a time: the claim is about two refunds of one
			// order. Pairs of different orders overlapping meet on the
			// status indexes' gap locks of these small tables (MariaDB's
			// next-key locks), a retried deadlock across orders that is
			// not a lock order of one order's rows.
			wg.Wait()
		}
		if n := deadlocks.Load(); n > 0 {
			t.Errorf("%d transactions ran again after a deadlock or a lock wait: the two refunds lock in different orders", n)
		}
		if n := db.Client.Payment.Query().Where(payment.StatusEQ(enums.PaymentRefunded)).CountX(ctx); n != pairs {
			t.Errorf("%d payments REFUNDED, want %d", n, pairs)
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stock {
			t.Errorf("stock %d, want %d: every refund restored once what its order took", s, stock)
		}
		var restores int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE change_type = 4").Scan(&restores); err != nil || restores != pairs {
			t.Errorf("%d refund restore rows (%v), want %d", restores, err, pairs)
		}
	})
}
