package aftersale_test

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"storefront/ent/refund"
	"storefront/ent/stocklog"
	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A return's stock comes back once per line: 10 receiveReturns at once, a
// replayed confirmation of its refund (sent again, the provider's whole
// REFUNDED notification) change nothing more; the ledger's business keys
// show one type-4 row per line under the after-sale's number; reconcile
// is clean. A refund only of unshipped units restores them once, when
// confirmed; one of shipped units restores nothing.
func TestStockComesBackOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 3, f.items...)
		f.shipAll(t, o)
		before := []int64{f.stock(t, f.items[0]), f.stock(t, f.items[1])}
		a := f.request(t, o, enums.AfterSaleReturnAndRefund, as.LineInput{ItemID: f.items[0], Quantity: 2}, as.LineInput{ItemID: f.items[1], Quantity: 1})
		owner := as.Actor{ID: o.UserID}
		if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
			t.Fatal(err)
		}
		if _, err := f.as.ReturnShipped(ctx, owner, a.Sn, "SF", "SF123"); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range 10 {
			wg.Go(func() {
				<-start
				if got, err := f.as.ReceiveReturn(ctx, admin, a.Sn); err != nil || (got.Status != enums.AfterSaleRefunding && got.Status != enums.AfterSaleRefunded) {
					t.Errorf("receive %d: %v, %v", i, got, err)
				}
			})
		}
		close(start)
		wg.Wait()
		// Duplicate confirmations: the refund sent again, the sweeper, the
		// provider's word that the whole payment was refunded.
		r := db.Client.Refund.Query().Where(refund.OrderID(o.ID)).OnlyX(ctx)
		for range 3 {
			if err := f.pay.SendRefund(ctx, r.RefundNo); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.pay.SweepRefunds(ctx); err != nil {
			t.Fatal(err)
		}
		cur := f.db.Client.Order.GetX(ctx, o.ID)
		n := mock.Notification{EventID: "ev-refunded-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn, Amount: cur.Amount.String(),
			Currency: "CNY", MerchantID: "m-1", Status: "REFUNDED", Timestamp: time.Now().Unix()}
		body, _ := json.Marshal(n)
		if _, err := f.pay.Notify(ctx, "mock", mock.Header(mock.Sign(secret, body)), body); err != nil {
			t.Fatal(err)
		}
		if _, err := f.as.ReceiveReturn(ctx, admin, a.Sn); err != nil {
			t.Fatalf("replayed receive: %v", err)
		}
		if s := f.stock(t, f.items[0]); s != before[0]+2 {
			t.Errorf("SKU %d stock %d, want %d", f.items[0], s, before[0]+2)
		}
		if s := f.stock(t, f.items[1]); s != before[1]+1 {
			t.Errorf("SKU %d stock %d, want %d", f.items[1], s, before[1]+1)
		}
		rows := db.Client.StockLog.Query().Where(stocklog.BizType(inventory.BizAfterSale), stocklog.BizSn(a.Sn)).AllX(ctx)
		if len(rows) != 2 {
			t.Errorf("%d ledger rows under %s, want one per line (2)", len(rows), a.Sn)
		}
		for _, r := range rows {
			if r.ChangeType != int8(inventory.RefundRestore) {
				t.Errorf("ledger row of change type %d, want 4", r.ChangeType)
			}
		}
		if n := db.Client.StockLog.Query().Where(stocklog.ChangeType(int8(inventory.RefundRestore))).CountX(ctx); n != 2 {
			t.Errorf("%d refund restores in all, want 2", n)
		}
		got := f.order(t, o.OrderSn)
		if got.Status != enums.OrderShipped || got.RefundedAmount != a.Amount {
			t.Errorf("order %s with %s refunded; want SHIPPED with %s", got.Status, got.RefundedAmount, a.Amount)
		}

		// A refund only of an unshipped order: its units
		// come back once, at the confirmation; they can no longer ship.
		o2 := f.paid(t, "buyer-2", 2, f.items[0])
		s0 := f.stock(t, f.items[0])
		b := f.request(t, o2, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
		for range 2 {
			if _, err := f.as.Approve(ctx, admin, b.Sn); err != nil && !errors.Is(err, checkout.ErrInvalidOrderState) {
				t.Fatal(err)
			}
		}
		if s := f.stock(t, f.items[0]); s != s0+1 {
			t.Errorf("after a refund only of 1 unshipped unit: stock %d, want %d", s, s0+1)
		}
		if _, w := f.lineOf(t, o2, f.items[0]); w != 1 {
			t.Errorf("%d units withheld, want 1", w)
		}
		f.clean(t)
	})
}

// A discounted order refunded unit by unit (and its last units together):
// the refunds add up to what was paid, to the cent, and the order is then
// REFUNDED.
func TestDiscountedRefundsAddUpToPaid(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: "buyer-1", Items: []checkout.ItemInput{
			{ItemID: &f.items[0], Quantity: 3}, {ItemID: &f.items[1], Quantity: 2}}})
		if err != nil {
			t.Fatal(err)
		}
		// A coupon's 10.01 off, apportioned as pricing does (the shares sum to it).
		const off = 1001
		l0 := o.Lines[0].UnitPrice*3 - 0
		share0 := (off * int64(l0)) / int64(o.Subtotal)
		// Refunds read a line's shares from the order's adjustment rows.
		for i, share := range []int64{share0, off - share0} {
			if _, err := db.SQL.ExecContext(ctx, "INSERT INTO order_adjustment (order_id, item_id, kind, source_id, label, amount) VALUES (?, ?, 'COUPON', 0, '', ?)",
				o.ID, o.Lines[i].ItemID, -share); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET discount = ?, amount = amount - ? WHERE id = ?", off, off, o.ID); err != nil {
			t.Fatal(err)
		}
		o = f.pays(t, o)
		f.shipAll(t, o)
		var sum int64
		refund := func(item, k int64) {
			a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: k})
			if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
				t.Fatal(err)
			}
			sum += int64(a.Amount)
		}
		// One unit refused and given back between, so the held money moves both ways.
		c := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: o.Lines[0].ItemID, Quantity: 2})
		if _, err := f.as.Reject(ctx, admin, c.Sn, "no"); err != nil {
			t.Fatal(err)
		}
		refund(o.Lines[0].ItemID, 1)
		refund(o.Lines[0].ItemID, 1)
		refund(o.Lines[0].ItemID, 1)
		refund(o.Lines[1].ItemID, 1)
		refund(o.Lines[1].ItemID, 1)
		got := f.order(t, o.OrderSn)
		if sum != int64(got.Amount) || got.RefundedAmount != got.Amount || got.Status != enums.OrderRefunded {
			t.Errorf("refunds sum to %d; order %s refunded %s of %s; want all of it, REFUNDED", sum, got.Status, got.RefundedAmount, got.Amount)
		}
		if _, err := f.as.Request(ctx, as.RequestInput{UserID: o.UserID, OrderSn: o.OrderSn, Type: enums.AfterSaleRefundOnly,
			Lines: []as.LineInput{{ItemID: o.Lines[0].ItemID, Quantity: 1}}, Reason: "again"}); !errors.Is(err, checkout.ErrInvalidOrderState) {
			t.Errorf("a request on a REFUNDED order: %v", err)
		}
	})
}

// The provider's word that the whole payment was refunded, for an order an
// after-sale had refunded part of (still PAID): the Refund transition cannot
// take it (money was reserved), so the order keeps its status and its stock
// and is flagged for a person.
func TestWholeRefundAtProviderAfterAPartialOneIsFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 2, f.items[0])
		a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
		if _, err := f.as.Approve(ctx, admin, a.Sn); err != nil {
			t.Fatal(err)
		}
		stock := f.stock(t, f.items[0])
		cur := f.order(t, o.OrderSn)
		if cur.Status != enums.OrderPaid || cur.RefundedAmount != a.Amount {
			t.Fatalf("after the partial refund: %s with %s refunded, want PAID with %s", cur.Status, cur.RefundedAmount, a.Amount)
		}
		n := mock.Notification{EventID: "ev-whole-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn, Amount: cur.Amount.String(),
			Currency: "CNY", MerchantID: "m-1", Status: "REFUNDED", Timestamp: time.Now().Unix()}
		body, _ := json.Marshal(n)
		if _, err := f.pay.Notify(ctx, "mock", mock.Header(mock.Sign(secret, body)), body); err != nil {
			t.Fatal(err)
		}
		got := db.Client.Order.GetX(ctx, o.ID)
		if got.Status != enums.OrderPaid || !got.NeedsReview {
			t.Errorf("order %s, needsReview=%v; want PAID and flagged", got.Status, got.NeedsReview)
		}
		if s := f.stock(t, f.items[0]); s != stock {
			t.Errorf("stock %d, want %d (unchanged by the provider's word)", s, stock)
		}
		f.clean(t)
	})
}
