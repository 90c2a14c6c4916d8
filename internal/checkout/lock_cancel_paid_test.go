package checkout

import (
	"context"
	"testing"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Money for a lock-mode order its buyer cancelled (not one the timeout
// closed) is never turned into a sale, even with stock to cover it: they
// said they did not want it. The order stays CLOSED, flagged for review,
// with one PaymentForClosedOrder, and stock and locks are untouched (issue
// 25, section 7).
func TestLockModePaymentAfterCancel(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		f.lockMode(t)
		id := f.skuID(t, "藏青,XL") // 5 in stock
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "buyer", Items: []ItemInput{one(id, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CancelOrder(ctx, "buyer", false, o.OrderSn); err != nil {
			t.Fatal(err)
		}
		stock, locked := f.stock(t, id), f.locked(t, id)
		if f.pay(t, o.ID, Payer{ID: 1, Provider: "mock", PaymentID: "after-cancel", Amount: o.Amount}) {
			t.Error("a payment after the buyer's cancel paid the order")
		}
		row := db.Client.Order.GetX(ctx, o.ID)
		if row.Status != enums.OrderClosed || !row.NeedsReview || f.eventsOf(t, EventPaymentForClosedOrder) != 1 || f.eventsOf(t, EventOrderPaidAfterClose) != 0 {
			t.Errorf("paid after the cancel: %s, needs review %v, %d PaymentForClosedOrder, %d OrderPaidAfterClose; want CLOSED, true, 1, 0",
				row.Status, row.NeedsReview, f.eventsOf(t, EventPaymentForClosedOrder), f.eventsOf(t, EventOrderPaidAfterClose))
		}
		if got, lk, n := f.stock(t, id), f.locked(t, id), f.rows(t, id, inventory.PaymentDeduct); got != stock || lk != locked || n != 0 {
			t.Errorf("stock %d, locked %d, %d type-2 rows; want %d, %d, 0 (untouched)", got, lk, n, stock, locked)
		}
		f.clean(t, "after a payment for a cancelled order")
	})
}
