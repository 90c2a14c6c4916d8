package aftersale_test

import (
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// refundOrder runs on the after-sales service the composition root built
// (app.Orders): its clock and settings are the ones refundOrder's
// after-sale is written with. payments.New built a second one of its own,
// with the defaults and the real clock.
func TestRefundOrderUsesTheOneAfterSalesService(t *testing.T) {
	db := testdb.Open(t, testdb.SQLite)
	f := setup(t, db)
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	f.as.SetClock(func() time.Time { return at })
	o := f.paid(t, "buyer-1", 1, f.items[0])
	if _, err := f.as.RefundOrder(ctx, admin, o.OrderSn, "one service"); err != nil {
		t.Fatal(err)
	}
	list, err := f.as.OfOrder(ctx, o.ID)
	if err != nil || len(list) != 1 {
		t.Fatalf("after-sales of %s: %v %v", o.OrderSn, list, err)
	}
	if !list[0].CreatedAt.Equal(at) {
		t.Errorf("refundOrder's after-sale was written at %s, not at the clock of the after-sales service (%s)", list[0].CreatedAt, at)
	}
}
