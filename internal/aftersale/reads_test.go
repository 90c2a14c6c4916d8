package aftersale_test

import (
	"sync/atomic"
	"testing"

	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// refundOrder reads the order once per step and passes it along: once to
// decide (its state, its lines, the payment that paid it), once where the
// provider's confirmation settles it (the refund's order, and the order
// REFUNDED for its event), once for the answer.
func TestRefundOrderReadsTheOrderOncePerStep(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			var reads atomic.Int64
			f := setup(t, testdb.Open(t, b, testdb.CountTableReads(&reads, "orders")))
			o := f.paid(t, "buyer-1", 1, f.items[0], f.items[1])
			reads.Store(0)
			got, err := f.as.RefundOrder(ctx, admin, o.OrderSn, "counted")
			if err != nil || got.Status != enums.OrderRefunded {
				t.Fatalf("refundOrder: %v %v", got, err)
			}
			t.Logf("order reads per refundOrder: %d", reads.Load())
			if n := reads.Load(); n > 4 {
				t.Errorf("refundOrder read the order %d times, want at most 4", n)
			}
		})
	}
}
