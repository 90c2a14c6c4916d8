package checkout

import (
	"context"
	"errors"
	"strings"
	"testing"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// PayTx pays an UNPAID order once: the winner names its payment, counts the
// lines sold and emits OrderPaid; a later payment flags the order (one
// DuplicatePayment each), the paying payment again changes nothing, and a
// payment for a closed order flags it without reopening it. Stock never moves.
func TestPayTx(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		blackL, whiteM := f.skuID(t, "黑色,L"), f.skuID(t, "白色,M")
		volume := func(id int64) int64 { return db.Client.Sku.GetX(ctx, id).Volume }
		v0L, v0M := volume(blackL), volume(whiteM)
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(whiteM, 4), one(blackL, 3)}})
		if err != nil {
			t.Fatal(err)
		}
		s0L, s0M := f.stock(t, blackL), f.stock(t, whiteM)
		pay := func(orderID int64, p Payer) bool {
			t.Helper()
			var won bool
			if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				var err error
				won, err = PayTx(ctx, tx, orderID, p, f.svc.now())
				return err
			}); err != nil {
				t.Fatalf("PayTx(%d, %+v): %v", orderID, p, err)
			}
			return won
		}
		events := func(orderID int64, typ string) []*ent.Outbox {
			t.Helper()
			return db.Client.Outbox.Query().Where(outbox.Type(typ), outbox.AggregateID(db.Client.Order.GetX(ctx, orderID).OrderSn)).AllX(ctx)
		}
		first := Payer{ID: 101, Provider: "mock", PaymentID: "p-1", Amount: o.Amount}
		if !pay(o.ID, first) {
			t.Fatal("the first payment of an UNPAID order did not win")
		}
		row := db.Client.Order.GetX(ctx, o.ID)
		if row.Status != enums.OrderPaid || row.PaidPaymentID == nil || *row.PaidPaymentID != 101 || row.PaidAt == nil || row.NeedsReview {
			t.Errorf("paid order = status %s, paid_payment_id %v, paid_at %v, needs_review %v; want PAID by 101, not flagged",
				row.Status, row.PaidPaymentID, row.PaidAt, row.NeedsReview)
		}
		if dL, dM := volume(blackL)-v0L, volume(whiteM)-v0M; dL != 3 || dM != 4 {
			t.Errorf("volume moved by %d, %d; want 3, 4", dL, dM)
		}
		if evs := events(o.ID, EventOrderPaid); len(evs) != 1 || !strings.Contains(evs[0].Payload, o.OrderSn) {
			t.Errorf("OrderPaid events = %v, want one naming %s", evs, o.OrderSn)
		}

		if pay(o.ID, first) {
			t.Error("the paying payment won again")
		}
		extra := Payer{ID: 102, Provider: "mock", PaymentID: "p-2", Amount: money.MustParse("1.00")}
		if pay(o.ID, extra) {
			t.Error("a second payment won a PAID order")
		}
		if evs := events(o.ID, EventDuplicatePayment); len(evs) != 1 || !strings.Contains(evs[0].Payload, `"paymentId":"p-2"`) || !strings.Contains(evs[0].Payload, `"amount":"1.00"`) {
			t.Errorf("DuplicatePayment events = %v, want one naming p-2 and its 1.00", evs)
		}
		if row := db.Client.Order.GetX(ctx, o.ID); !row.NeedsReview || *row.PaidPaymentID != 101 {
			t.Errorf("after an extra payment: needs_review %v, paid_payment_id %v; want flagged, still 101", row.NeedsReview, *row.PaidPaymentID)
		}
		if dL, dM := volume(blackL)-v0L, volume(whiteM)-v0M; dL != 3 || dM != 4 {
			t.Errorf("volume moved by %d, %d after the extra payments; want still 3, 4", dL, dM)
		}

		c, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u1", false, c.OrderSn); err != nil {
			t.Fatal(err)
		}
		if pay(c.ID, Payer{ID: 103, Provider: "mock", PaymentID: "p-3", Amount: c.Amount}) {
			t.Error("a payment won a CLOSED order")
		}
		if row := db.Client.Order.GetX(ctx, c.ID); row.Status != enums.OrderClosed || !row.NeedsReview || row.PaidPaymentID != nil {
			t.Errorf("closed order after a payment = %s, needs_review %v, paid_payment_id %v; want CLOSED, flagged, none",
				row.Status, row.NeedsReview, row.PaidPaymentID)
		}
		if n := len(events(c.ID, EventPaymentForClosedOrder)); n != 1 {
			t.Errorf("PaymentForClosedOrder events = %d, want 1", n)
		}
		if n := len(events(c.ID, EventOrderPaid)); n != 0 {
			t.Errorf("OrderPaid events of the closed order = %d, want 0", n)
		}
		if f.stock(t, blackL) != s0L || f.stock(t, whiteM) != s0M {
			t.Errorf("stock = %d, %d; paying moves none (want %d, %d)", f.stock(t, blackL), f.stock(t, whiteM), s0L, s0M)
		}
	})
}

// The refund reservation's CAS holds on the money reserved, not on the
// money refunded: a reservation while another is still unconfirmed
// cannot take the order past what was paid.
func TestRefundReservationsNeverPassWhatWasPaid(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(f.skuID(t, "黑色,L"), 2)}})
		if err != nil {
			t.Fatal(err)
		}
		if !f.pay(t, o.ID, Payer{ID: o.ID, Provider: "mock", PaymentID: "p-" + o.OrderSn, Amount: o.Amount}) {
			t.Fatal("not paid")
		}
		reserve := func(amount money.Money) error {
			return store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error { return ReserveRefundTx(ctx, tx, o.ID, amount) })
		}
		if err := reserve(o.Amount - 1); err != nil {
			t.Fatal(err)
		}
		if err := reserve(2); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a second reservation past what was paid (nothing confirmed yet): %v, want INVALID_ORDER_STATE", err)
		}
		if err := reserve(1); err != nil {
			t.Errorf("the last cent: %v", err)
		}
	})
}
