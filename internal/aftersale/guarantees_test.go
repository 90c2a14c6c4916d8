package aftersale_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/ent/aftersale"
	"storefront/ent/aftersalelog"
	"storefront/ent/refund"
	"storefront/ent/stocklog"
	as "storefront/internal/aftersale"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// 20 requests at once for one unit each of a line of 3: exactly 3 stand,
// the rest are INVALID_INPUT saying what is left; the line holds 3.
func TestRequestsNeverExceedWhatWasBought(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 3, f.items[0])
		won, refused := f.requestsAtOnce(t, o, 20, enums.AfterSaleRefundOnly, "0 left")
		if won != 3 || refused != 17 {
			t.Errorf("%d requests stand, %d refused; want 3 and 17", won, refused)
		}
		if n := db.Client.AfterSale.Query().Where(aftersale.OrderID(o.ID)).CountX(ctx); n != 3 {
			t.Errorf("%d after-sales written, want 3", n)
		}
		if q, w := f.lineOf(t, o, f.items[0]); q != 3 || w != 3 {
			t.Errorf("line holds %d units (%d withheld), want 3 and 3", q, w)
		}
	})
}

// A line of 3 with 2 shipped: of 10 one-unit returns at once exactly 2
// stand (a return takes shipped units no other after-sale has), then the
// unshipped unit can still be refunded (withheld, so it never ships), and
// no further return fits. Before, a third return passed: it checked each
// request against the shipped units alone, not against earlier returns.
func TestReturnsNeverExceedWhatShipped(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 3, f.items[0])
		if _, err := db.SQL.ExecContext(ctx, "UPDATE order_line SET shipped_quantity = 2 WHERE order_id = ?", o.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", string(enums.OrderPartiallyShipped), o.ID); err != nil {
			t.Fatal(err)
		}
		one := []as.LineInput{{ItemID: f.items[0], Quantity: 1}}
		won, refused := f.requestsAtOnce(t, o, 10, enums.AfterSaleReturnAndRefund, "only shipped units")
		if won != 2 || refused != 8 {
			t.Errorf("%d returns stand, %d refused; want 2 and 8", won, refused)
		}
		f.request(t, o, enums.AfterSaleRefundOnly, one...)
		if q, w := f.lineOf(t, o, f.items[0]); q != 3 || w != 1 {
			t.Errorf("line holds %d units (%d withheld), want 3 and 1", q, w)
		}
		if _, err := f.as.Request(ctx, as.RequestInput{UserID: o.UserID, OrderSn: o.OrderSn, Type: enums.AfterSaleReturnAndRefund,
			Lines: one, Reason: "one more"}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("a fourth unit's return: %v, want INVALID_INPUT", err)
		}
	})
}

// requestsAtOnce sends n requests of type typ for one unit of o's first
// SKU all at once and counts those that stood and those refused with
// INVALID_INPUT saying refusal; any other answer fails the test.
func (f *fixture) requestsAtOnce(t *testing.T, o *checkout.Order, n int, typ enums.AfterSaleType, refusal string) (won, refused int) {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			_, err := f.as.Request(ctx, as.RequestInput{UserID: o.UserID, OrderSn: o.OrderSn, Type: typ,
				Lines: []as.LineInput{{ItemID: f.items[0], Quantity: 1}}, Reason: fmt.Sprint("r", i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case errors.Is(err, errs.InvalidInput) && strings.Contains(err.Error(), refusal):
				refused++
			default:
				t.Errorf("request %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	return won, refused
}

// 10 approves and cancels of one request at once: one outcome, one refund
// at most, one log row out of REQUESTED.
func TestApproveAndCancelRaceToOneOutcome(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		for round := range 3 {
			o := f.paid(t, "buyer-1", 2, f.items[0])
			a := f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: f.items[0], Quantity: 1})
			owner := as.Actor{ID: o.UserID}
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range 10 {
				wg.Go(func() {
					<-start
					var err error
					if i%2 == 0 {
						_, err = f.as.Approve(ctx, admin, a.Sn)
					} else {
						_, err = f.as.Cancel(ctx, owner, a.Sn)
					}
					if err != nil && !errors.Is(err, checkout.ErrInvalidOrderState) {
						t.Errorf("round %d, call %d: %v", round, i, err)
					}
				})
			}
			close(start)
			wg.Wait()
			cur := db.Client.AfterSale.Query().Where(aftersale.AfterSaleSn(a.Sn)).OnlyX(ctx)
			refunds := db.Client.Refund.Query().Where(refund.OrderID(o.ID)).AllX(ctx)
			outs := db.Client.AfterSaleLog.Query().Where(aftersalelog.AfterSaleID(cur.ID), aftersalelog.FromStatus(string(enums.AfterSaleRequested))).CountX(ctx)
			if outs != 1 {
				t.Errorf("round %d: %d transitions out of REQUESTED, want 1", round, outs)
			}
			got := f.order(t, o.OrderSn)
			q, _ := f.lineOf(t, o, f.items[0])
			switch cur.Status {
			case enums.AfterSaleRefunded:
				if len(refunds) != 1 || refunds[0].Status != enums.RefundSucceeded || refunds[0].RefundNo != a.Sn+"-R1" {
					t.Errorf("round %d: refunded with refunds %+v, want one SUCCEEDED %s-R1", round, refunds, a.Sn)
				}
				if got.RefundedAmount != a.Amount || q != 1 {
					t.Errorf("round %d: order refunded %s (line holds %d), want %s and 1", round, got.RefundedAmount, q, a.Amount)
				}
			case enums.AfterSaleCancelled:
				if len(refunds) != 0 || got.RefundedAmount != 0 || q != 0 {
					t.Errorf("round %d: cancelled with %d refunds, %s refunded, line holding %d", round, len(refunds), got.RefundedAmount, q)
				}
			default:
				t.Errorf("round %d: after-sale is %s", round, cur.Status)
			}
		}
	})
}

// After-sales of different lines of one order approved at once: the
// refunds sum to at most what was paid (to exactly it, once all are
// refunded), each refund number once; and a refund beyond what was paid
// is refused by the order's CAS.
func TestRacingRefundsNeverExceedPaid(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.paid(t, "buyer-1", 3, f.items...)
		f.shipAll(t, o)
		var sns []string
		for _, item := range f.items {
			for range 3 {
				sns = append(sns, f.request(t, o, enums.AfterSaleRefundOnly, as.LineInput{ItemID: item, Quantity: 1}).Sn)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, sn := range sns {
			for range 2 {
				wg.Go(func() {
					<-start
					if _, err := f.as.Approve(ctx, admin, sn); err != nil && !errors.Is(err, checkout.ErrInvalidOrderState) {
						t.Errorf("approve %s: %v", sn, err)
					}
				})
			}
		}
		close(start)
		wg.Wait()
		rows := db.Client.Refund.Query().Where(refund.OrderID(o.ID)).AllX(ctx)
		var sum money.Money
		seen := map[string]bool{}
		for _, r := range rows {
			if seen[r.RefundNo] {
				t.Errorf("refund number %s twice", r.RefundNo)
			}
			seen[r.RefundNo] = true
			if r.Status == enums.RefundSucceeded {
				sum += r.Amount
			}
		}
		got := f.order(t, o.OrderSn)
		if len(rows) != len(sns) || sum != got.Amount || got.RefundedAmount != got.Amount || got.Status != enums.OrderRefunded {
			t.Errorf("%d refunds for %d after-sales summing to %s; order %s refunded %s of %s; want one each, all of it, REFUNDED",
				len(rows), len(sns), sum, got.Status, got.RefundedAmount, got.Amount)
		}
		// Goods kept (everything had shipped): no stock came back.
		if n := db.Client.StockLog.Query().Where(stocklog.BizType(inventory.BizAfterSale)).CountX(ctx); n != 0 {
			t.Errorf("%d restores for goods the buyer kept", n)
		}
		// Money beyond what was paid: the order's CAS refuses it, whatever a
		// request's arithmetic said.
		err := store.WithTx(ctx, db, func(ctx2 context.Context, tx *ent.Tx) error {
			return checkout.ReserveRefundTx(ctx2, tx, o.ID, 1)
		})
		if !errors.Is(err, checkout.ErrInvalidOrderState) {
			t.Errorf("reserving a cent more than paid: %v", err)
		}
		f.clean(t)
	})
}
