package payments_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/ent/payment"
	"storefront/ent/stocklog"
	"storefront/internal/checkout"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// place places a real order of two units (so a refund has stock to restore).
func (f *fixture) place(t *testing.T, key string) *ent.Order {
	t.Helper()
	ctx := context.Background()
	item := f.itemID
	p, err := checkout.New(f.db, checkout.DefaultConfig()).Place(ctx, checkout.PlaceInput{
		UserID: "u1", Items: []checkout.ItemInput{{ItemID: &item, Quantity: 2}}, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return f.db.Client.Order.GetX(ctx, p.ID)
}

// events returns the outbox events of type typ about order o, oldest first.
func events(t *testing.T, db *store.DB, o *ent.Order, typ string) []map[string]string {
	t.Helper()
	rows := db.Client.Outbox.Query().Where(outbox.AggregateID(o.OrderSn), outbox.Type(typ)).
		Order(outbox.ByID()).AllX(context.Background())
	out := make([]map[string]string, len(rows))
	for i, r := range rows {
		if err := json.Unmarshal([]byte(r.Payload), &out[i]); err != nil {
			t.Fatalf("%s payload %s: %v", typ, r.Payload, err)
		}
	}
	return out
}

func refunded(o *ent.Order, event, paymentID string) mock.Notification {
	n := success(o, event, paymentID)
	n.Status = "REFUNDED"
	return n
}

// Four SUCCESS notifications with four payment ids for one order: the
// first pays it, the other three are kept (money is never dropped) and each
// flags the order with a DuplicatePayment event. A refund refunds the
// payment that paid the order; the extras stay PAID for a person (issue 15,
// item 3).
func TestSecondPaymentForPaidOrderIsKeptAndFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		stock := db.Client.Sku.GetX(ctx, f.itemID).Stock
		o := f.place(t, "dup-1")
		vol := db.Client.Sku.GetX(ctx, f.itemID).Volume
		pids := []string{"P1", "P2", "P3", "P4"}
		for _, pid := range pids {
			if c := f.notify(t, "mock", success(o, "ev-"+pid, pid), ""); c != 200 {
				t.Fatalf("SUCCESS %s: HTTP %d", pid, c)
			}
		}
		// The provider repeats one extra payment under a new event id: it
		// was flagged already, nothing runs again.
		if c := f.notify(t, "mock", success(o, "ev-P3-again", "P3"), ""); c != 200 {
			t.Fatalf("repeat of P3: HTTP %d", c)
		}
		rows := db.Client.Payment.Query().Where(payment.OrderID(o.ID)).Order(payment.ByID()).AllX(ctx)
		if len(rows) != 4 {
			t.Fatalf("payment rows = %d, want 4 (money is always kept)", len(rows))
		}
		for _, p := range rows {
			if p.Status != enums.PaymentPaid {
				t.Errorf("payment %s: %s, want PAID", p.PaymentID, p.Status)
			}
		}
		got := db.Client.Order.GetX(ctx, o.ID)
		if got.Status != enums.OrderPaid || !got.NeedsReview {
			t.Errorf("order %s needsReview=%v, want PAID and flagged", got.Status, got.NeedsReview)
		}
		if got.PaidPaymentID == nil || *got.PaidPaymentID != rows[0].ID {
			t.Errorf("order paid by payment %v, want %d (P1)", got.PaidPaymentID, rows[0].ID)
		}
		if n := len(events(t, db, o, checkout.EventOrderPaid)); n != 1 {
			t.Errorf("OrderPaid events = %d, want 1", n)
		}
		var flagged []string
		for _, e := range events(t, db, o, checkout.EventDuplicatePayment) {
			flagged = append(flagged, e["paymentId"])
		}
		if !slices.Equal(flagged, pids[1:]) {
			t.Errorf("DuplicatePayment events name %v, want %v (one per extra payment)", flagged, pids[1:])
		}
		if v := db.Client.Sku.GetX(ctx, f.itemID).Volume - vol; v != 2 {
			t.Errorf("volume added %d, want 2 (once)", v)
		}
		if p, err := f.svc.ForOrder(ctx, o.ID); err != nil || p.PaymentID != "P1" {
			t.Errorf("ForOrder: %+v %v, want P1", p, err)
		}
		all, err := f.svc.OfOrder(ctx, o.ID)
		if err != nil || len(all) != 4 || all[0].PaymentID != "P1" || all[3].PaymentID != "P4" {
			t.Errorf("OfOrder: %+v %v, want P1…P4", all, err)
		}

		if _, err := f.refund(ctx, o.OrderSn, "customer returned it"); err != nil {
			t.Fatal(err)
		}
		for _, p := range db.Client.Payment.Query().Where(payment.OrderID(o.ID)).Order(payment.ByID()).AllX(ctx) {
			want := enums.PaymentPaid // extra money waits for a person
			if p.PaymentID == "P1" {
				want = enums.PaymentRefunded
			}
			if p.Status != want {
				t.Errorf("after the refund, payment %s is %s, want %s", p.PaymentID, p.Status, want)
			}
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stock {
			t.Errorf("stock after the refund = %d, want %d", s, stock)
		}
		if p, err := f.svc.ForOrder(ctx, o.ID); err != nil || p.PaymentID != "P1" || p.Status != enums.PaymentRefunded {
			t.Errorf("ForOrder after the refund: %+v %v, want P1 REFUNDED", p, err)
		}
	})
}

// A refund made at the provider for an extra payment refunds that payment
// only; the order stays PAID until the payment that paid it is refunded.
func TestProviderRefundOfExtraPaymentLeavesOrderPaid(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		o := f.place(t, "dup-2")
		for _, pid := range []string{"Q1", "Q2"} {
			if c := f.notify(t, "mock", success(o, "ev-"+pid, pid), ""); c != 200 {
				t.Fatalf("SUCCESS %s: HTTP %d", pid, c)
			}
		}
		stock := db.Client.Sku.GetX(ctx, f.itemID).Stock
		if c := f.notify(t, "mock", refunded(o, "ev-Q2-refund", "Q2"), ""); c != 200 {
			t.Fatalf("REFUNDED Q2: HTTP %d", c)
		}
		if s := db.Client.Order.GetX(ctx, o.ID).Status; s != enums.OrderPaid {
			t.Errorf("after the extra payment's refund the order is %s, want PAID", s)
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stock {
			t.Errorf("stock moved %d -> %d on the extra payment's refund", stock, s)
		}
		status := func(pid string) enums.PaymentStatus {
			return db.Client.Payment.Query().Where(payment.PaymentID(pid)).OnlyX(ctx).Status
		}
		if status("Q1") != enums.PaymentPaid || status("Q2") != enums.PaymentRefunded {
			t.Errorf("Q1 %s, Q2 %s; want PAID, REFUNDED", status("Q1"), status("Q2"))
		}
		if c := f.notify(t, "mock", refunded(o, "ev-Q1-refund", "Q1"), ""); c != 200 {
			t.Fatalf("REFUNDED Q1: HTTP %d", c)
		}
		if s := db.Client.Order.GetX(ctx, o.ID).Status; s != enums.OrderRefunded {
			t.Errorf("after the paying payment's refund the order is %s, want REFUNDED", s)
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stock+2 {
			t.Errorf("stock %d, want %d (restored once)", s, stock+2)
		}
	})
}

// Four payment ids for one order, each sent four times (twice under one
// event id, twice under fresh ones), all at once, for several orders:
// exactly one payment pays each order, one OrderPaid, one DuplicatePayment
// per extra payment, the order flagged.
func TestFourPaymentsRacingForOneOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		vol := db.Client.Sku.GetX(ctx, f.itemID).Volume
		const rounds, ids, sends = 3, 4, 4
		for round := range rounds {
			o := f.newOrder(t, enums.OrderUnpaid)
			pids := make([]string, ids)
			for i := range pids {
				pids[i] = fmt.Sprintf("R%d-P%d", round, i)
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for _, pid := range pids {
				for k := range sends {
					wg.Add(1)
					go func() {
						defer wg.Done()
						event := "ev-" + pid
						if k >= 2 {
							event = fmt.Sprintf("ev-%s-%d", pid, k)
						}
						<-start
						if c := f.notify(t, "mock", success(o, event, pid), ""); c != 200 {
							t.Errorf("round %d, %s send %d: HTTP %d", round, pid, k, c)
						}
					}()
				}
			}
			close(start)
			wg.Wait()

			got := db.Client.Order.GetX(ctx, o.ID)
			if got.Status != enums.OrderPaid || !got.NeedsReview || got.PaidPaymentID == nil {
				t.Fatalf("round %d: order %s needsReview=%v paidBy=%v, want PAID, flagged, paid by one payment", round, got.Status, got.NeedsReview, got.PaidPaymentID)
			}
			rows := db.Client.Payment.Query().Where(payment.OrderID(o.ID)).AllX(ctx)
			var payer string
			var extras []string
			for _, p := range rows {
				if p.Status != enums.PaymentPaid {
					t.Errorf("round %d: payment %s is %s, want PAID", round, p.PaymentID, p.Status)
				}
				if p.ID == *got.PaidPaymentID {
					payer = p.PaymentID
				} else {
					extras = append(extras, p.PaymentID)
				}
			}
			if len(rows) != ids || payer == "" {
				t.Fatalf("round %d: %d payment rows, payer %q; want %d rows, one of them the payer", round, len(rows), payer, ids)
			}
			if n := len(events(t, db, o, checkout.EventOrderPaid)); n != 1 {
				t.Errorf("round %d: OrderPaid events = %d, want 1", round, n)
			}
			var flagged []string
			for _, e := range events(t, db, o, checkout.EventDuplicatePayment) {
				flagged = append(flagged, e["paymentId"])
			}
			slices.Sort(flagged)
			slices.Sort(extras)
			if !slices.Equal(flagged, extras) {
				t.Errorf("round %d: DuplicatePayment events name %v, want each extra payment once: %v (payer %s)", round, flagged, extras, payer)
			}
		}
		if v := db.Client.Sku.GetX(ctx, f.itemID).Volume - vol; v != 2*rounds {
			t.Errorf("volume added %d, want %d (once per order)", v, 2*rounds)
		}
	})
}

// Each payment for a closed order asks a person once, however often the
// provider repeats it: the rule for money the order did not need.
func TestTwoPaymentsForClosedOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.newOrder(t, enums.OrderClosed)
		for _, n := range []mock.Notification{
			success(o, "c1", "PX"), success(o, "c1-again", "PX"), success(o, "c2", "PY"),
		} {
			n.Timestamp = time.Now().Unix()
			if c := f.notify(t, "mock", n, ""); c != 200 {
				t.Fatalf("%s: HTTP %d", n.EventID, c)
			}
		}
		var named []string
		for _, e := range events(t, db, o, checkout.EventPaymentForClosedOrder) {
			named = append(named, e["paymentId"])
		}
		if !slices.Equal(named, []string{"PX", "PY"}) {
			t.Errorf("PaymentForClosedOrder events name %v, want [PX PY]", named)
		}
		got := db.Client.Order.GetX(context.Background(), o.ID)
		if got.Status != enums.OrderClosed || !got.NeedsReview || got.PaidPaymentID != nil {
			t.Errorf("order %s needsReview=%v paidBy=%v, want CLOSED, flagged, paid by none", got.Status, got.NeedsReview, got.PaidPaymentID)
		}
		if n := db.Client.StockLog.Query().Where(stocklog.BizSn(o.OrderSn)).CountX(context.Background()); n != 0 {
			t.Errorf("ledger rows for the closed order = %d, want 0", n)
		}
	})
}

// Money for an order another payment paid is flagged whatever the order
// went on to: shipped in part or whole, completed. Before, only PAID and
// REFUNDED orders were flagged, and a second payment of a shipped order
// was kept with no one told.
func TestSecondPaymentAfterShippingIsFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		for i, st := range []enums.OrderStatus{enums.OrderPartiallyShipped, enums.OrderShipped, enums.OrderCompleted} {
			o := f.place(t, fmt.Sprintf("ship-dup-%d", i))
			if c := f.notify(t, "mock", success(o, fmt.Sprintf("ev-A%d", i), fmt.Sprintf("A%d", i)), ""); c != 200 {
				t.Fatalf("first payment: HTTP %d", c)
			}
			// As shipOrder and confirmReceipt leave it (their own tests cover how).
			if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", string(st), o.ID); err != nil {
				t.Fatal(err)
			}
			if c := f.notify(t, "mock", success(o, fmt.Sprintf("ev-B%d", i), fmt.Sprintf("B%d", i)), ""); c != 200 {
				t.Fatalf("second payment: HTTP %d", c)
			}
			got := db.Client.Order.GetX(ctx, o.ID)
			if got.Status != st || !got.NeedsReview {
				t.Errorf("%s order after a second payment: %s, needsReview=%v; want %s and flagged", st, got.Status, got.NeedsReview, st)
			}
			ev := events(t, db, o, checkout.EventDuplicatePayment)
			if len(ev) != 1 || ev[0]["paymentId"] != fmt.Sprintf("B%d", i) {
				t.Errorf("%s order: DuplicatePayment events %v, want one naming B%d", st, ev, i)
			}
		}
	})
}

// A whole refund made at the provider after the order shipped: the
// payment is REFUNDED, the order keeps its status and its goods (no stock
// comes back: the buyer has them) and is flagged for a person. Before, the
// order was left as it was with no one told.
func TestProviderRefundOfShippedOrderIsFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		o := f.place(t, "ship-refund")
		if c := f.notify(t, "mock", success(o, "ev-P", "P"), ""); c != 200 {
			t.Fatalf("payment: HTTP %d", c)
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", string(enums.OrderShipped), o.ID); err != nil {
			t.Fatal(err)
		}
		stock := db.Client.Sku.GetX(ctx, f.itemID).Stock
		if c := f.notify(t, "mock", refunded(o, "ev-P-refunded", "P"), ""); c != 200 {
			t.Fatalf("REFUNDED: HTTP %d", c)
		}
		got := db.Client.Order.GetX(ctx, o.ID)
		if got.Status != enums.OrderShipped || !got.NeedsReview {
			t.Errorf("order %s, needsReview=%v; want SHIPPED and flagged", got.Status, got.NeedsReview)
		}
		if p := db.Client.Payment.Query().Where(payment.OrderID(o.ID)).OnlyX(ctx); p.Status != enums.PaymentRefunded {
			t.Errorf("payment %s, want REFUNDED", p.Status)
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stock {
			t.Errorf("stock %d after the refund of a shipped order, want %d (unchanged)", s, stock)
		}
	})
}
