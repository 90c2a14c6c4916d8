package payments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"storefront/ent/aftersale"
	"storefront/ent/order"
	"storefront/ent/outbox"
	"storefront/ent/payment"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// Lock at order, deduct at payment, paid the way money really arrives
// (issue 17): a lock-mode SKU with 200 in stock takes 200 orders (locked,
// nothing deducted), then 150 of them are paid through signed
// notifications over HTTP, each sent three times at once with the buyer's
// redirect racing them. The lock becomes the deduction exactly once per
// order: stock 50, locked 50, 150 change-type-2 rows, one OrderPaid each,
// reconciliation clean. A later SUCCESS for the same payment under a new
// event id changes nothing. Then a refund gives one unit back (change type
// 4) and the books still balance. On both placing paths.
func TestLockModePaidByNotifications(t *testing.T) {
	for _, group := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "group"}[group]
		t.Run(name, func(t *testing.T) {
			testdb.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				f := setup(t, db)
				cat := catalog.New(db, catalog.DefaultConfig())
				shirt, err := cat.IDByCode(ctx, demo.TShirtCode)
				if err != nil || shirt == 0 {
					t.Fatalf("the demo T-shirt: %d, %v", shirt, err)
				}
				if _, err := cat.SetStockMode(ctx, shirt, enums.LockAtOrder); err != nil {
					t.Fatal(err)
				}
				id := db.Client.Sku.Query().Where(sku.GoodsID(shirt), sku.SpecValueStr("黑色,L")).OnlyIDX(ctx)
				if s := db.Client.Sku.GetX(ctx, id); s.Stock != 200 || s.LockStock != 0 {
					t.Fatalf("hot SKU before: stock %d, locked %d; want 200, 0", s.Stock, s.LockStock)
				}
				cfg := checkout.DefaultConfig()
				cfg.GroupCommit = group
				co := checkout.New(db, cfg)

				orders := make([]*checkout.Order, 200)
				limit(200, 64, func(i int) {
					o, err := co.Place(ctx, checkout.PlaceInput{UserID: fmt.Sprint("u", i), IdempotencyKey: fmt.Sprint("lock-", i),
						Items: []checkout.ItemInput{{ItemID: &id, Quantity: 1}}})
					if err != nil {
						t.Errorf("order %d: %v", i, err)
						return
					}
					if o.Lines[0].StockMode != enums.LockAtOrder {
						t.Errorf("order %d placed as %s, want LOCK_AT_ORDER", i, o.Lines[0].StockMode)
					}
					orders[i] = o
				})
				if t.Failed() {
					t.FailNow()
				}
				if _, err := co.Place(ctx, checkout.PlaceInput{UserID: "late", Items: []checkout.ItemInput{{ItemID: &id, Quantity: 1}}}); !errors.Is(err, checkout.ErrOutOfStock) {
					t.Errorf("order 201: %v, want OUT_OF_STOCK", err)
				}
				f.lockBooks(t, id, 200, 200, 0, "after 200 orders")

				// 150 payments, 16 orders at a time, each order's three copies
				// of its notification and its redirect released together.
				limit(150, 16, func(i int) {
					o := orders[i]
					n := mock.Notification{EventID: "ev-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn,
						Amount: o.Amount.String(), Currency: o.Currency, MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()}
					body, sig := signed(n)
					start := make(chan struct{})
					var wg sync.WaitGroup
					for c := range 3 {
						wg.Go(func() {
							<-start
							if code, answer, err := f.post(body, sig); err != nil || code != 200 || answer != "success" {
								t.Errorf("order %d, notification copy %d: HTTP %d %q %v; want 200 success", i, c, code, answer, err)
							}
						})
					}
					wg.Go(func() {
						<-start
						owner := auth.Principal{UserID: o.UserID, Role: auth.Customer}
						if _, err := f.svc.Return(ctx, owner, "mock", n.PaymentID, o.OrderSn); err != nil {
							t.Errorf("order %d, redirect: %v", i, err)
						}
					})
					close(start)
					wg.Wait()
				})
				f.lockBooks(t, id, 50, 50, 150, "after 150 payments")
				f.paidOnce(t, orders[:150], orders[150:])

				// The provider sends SUCCESS for a payment again under a new
				// event id: applied (a new event), but the payment settled once.
				for i, o := range orders[:5] {
					n := mock.Notification{EventID: "again-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn,
						Amount: o.Amount.String(), Currency: o.Currency, MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()}
					body, sig := signed(n)
					if oc, err := f.svc.Notify(ctx, "mock", mock.Header(sig), body); err != nil || oc != payments.OutcomeApplied {
						t.Errorf("order %d, a new event for its payment: %q, %v; want applied", i, oc, err)
					}
				}
				f.lockBooks(t, id, 50, 50, 150, "after SUCCESS again under new event ids")
				f.paidOnce(t, orders[:150], orders[150:])

				// A refund of a paid lock-mode order restores its unit like any
				// paid order's (change type 4); the lock is not touched.
				if _, err := f.refund(ctx, orders[0].OrderSn, "customer returned it"); err != nil {
					t.Fatal(err)
				}
				f.lockBooks(t, id, 51, 50, 150, "after a refund")
				var num, rows int64
				var biz string
				// refundOrder is a whole-order after-sale (issue 43): its restore's
				// business key is the after-sale's number, not the order's.
				as := db.Client.AfterSale.Query().Where(aftersale.OrderID(orders[0].ID)).OnlyX(ctx)
				if err := db.SQL.QueryRow("SELECT COUNT(*), COALESCE(SUM(change_num), 0), COALESCE(MAX(biz_sn), '') FROM stock_log WHERE item_id = ? AND change_type = ?",
					id, int(inventory.RefundRestore)).Scan(&rows, &num, &biz); err != nil || rows != 1 || num != 1 || biz != as.AfterSaleSn {
					t.Errorf("refund ledger rows: %d of %+d in all, for %q (%v); want one of +1 for %s", rows, num, biz, err, as.AfterSaleSn)
				}
				if o := db.Client.Order.GetX(ctx, orders[0].ID); o.Status != enums.OrderRefunded {
					t.Errorf("refunded order is %s, want REFUNDED", o.Status)
				}
				if p := db.Client.Payment.Query().Where(payment.PaymentID("pay-" + orders[0].OrderSn)).OnlyX(ctx); p.Status != enums.PaymentRefunded {
					t.Errorf("refunded order's payment is %s, want REFUNDED", p.Status)
				}
			})
		})
	}
}

// lockBooks checks the hot lock-mode SKU: stock, lock_stock, the number of
// payment deductions (change type 2), the ledger summing to the stock, and
// reconciliation (which checks the lock against the unpaid orders' locked
// lines) clean on every SKU.
func (f *fixture) lockBooks(t *testing.T, id, stock, locked int64, deductions int, when string) {
	t.Helper()
	ctx := context.Background()
	s := f.db.Client.Sku.GetX(ctx, id)
	n := f.db.Client.StockLog.Query().Where(stocklog.ItemID(id), stocklog.ChangeType(int8(inventory.PaymentDeduct))).CountX(ctx)
	var sum int64
	if err := f.db.SQL.QueryRow("SELECT COALESCE(SUM(change_num), 0) FROM stock_log WHERE item_id = ?", id).Scan(&sum); err != nil {
		t.Fatal(err)
	}
	if s.Stock != stock || s.LockStock != locked || n != deductions || sum != s.Stock {
		t.Errorf("%s: stock %d, locked %d, %d change-type-2 rows, ledger sum %d; want %d, %d, %d, %d",
			when, s.Stock, s.LockStock, n, sum, stock, locked, deductions, stock)
	}
	d, err := inventory.New(f.db).Reconcile(ctx, 100)
	if err != nil || len(d) != 0 {
		t.Errorf("%s: reconciliation found %+v (%v), want nothing", when, d, err)
	}
}

// paidOnce checks that every paid order is PAID by its one payment, with
// one OrderPaid event and one change-type-2 row naming it, nothing flagged,
// and that every unpaid order is untouched.
func (f *fixture) paidOnce(t *testing.T, paid, unpaid []*checkout.Order) {
	t.Helper()
	ctx := context.Background()
	bad := 0
	for _, o := range paid {
		if bad == 3 {
			t.Errorf("(more paid orders not checked: the first three were wrong)")
			break
		}
		row := f.db.Client.Order.GetX(ctx, o.ID)
		pays := f.db.Client.Payment.Query().Where(payment.OrderID(o.ID)).AllX(ctx)
		events := f.db.Client.Outbox.Query().Where(outbox.AggregateID(o.OrderSn), outbox.Type(checkout.EventOrderPaid)).CountX(ctx)
		rows := f.db.Client.StockLog.Query().Where(stocklog.BizSn(o.OrderSn), stocklog.ChangeType(int8(inventory.PaymentDeduct))).CountX(ctx)
		if row.Status != enums.OrderPaid || row.NeedsReview || len(pays) != 1 || pays[0].Status != enums.PaymentPaid ||
			row.PaidPaymentID == nil || *row.PaidPaymentID != pays[0].ID || events != 1 || rows != 1 {
			bad++
			t.Errorf("paid order %s: %s, needs review %v, payments %d, %d OrderPaid events, %d type-2 rows; "+
				"want PAID by its one PAID payment, not flagged, 1 event, 1 row", o.OrderSn, row.Status, row.NeedsReview, len(pays), events, rows)
		}
	}
	for _, o := range unpaid {
		if row := f.db.Client.Order.GetX(ctx, o.ID); row.Status != enums.OrderUnpaid {
			t.Errorf("unpaid order %s is %s", o.OrderSn, row.Status)
		}
	}
	if n := f.db.Client.Outbox.Query().Where(outbox.Type(checkout.EventOrderPaid)).CountX(ctx); n != len(paid) {
		t.Errorf("%d OrderPaid events in all, want %d", n, len(paid))
	}
	if n := f.db.Client.Order.Query().Where(order.NeedsReview(true)).CountX(ctx); n != 0 {
		t.Errorf("%d orders flagged for review, want 0", n)
	}
}

// post sends a signed notification body to the mock provider's webhook and
// returns the status and the answer. Unlike notify it may run on any
// goroutine (it reports instead of failing the test).
func (f *fixture) post(body []byte, sig string) (int, string, error) {
	req, err := http.NewRequest("POST", f.srv.URL+"/payments/mock/notify", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("X-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(raw)), err
}

// limit runs fn(0..n-1), at most c at a time.
func limit(n, c int, fn func(i int)) {
	sem := make(chan struct{}, c)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fn(i)
		})
	}
	wg.Wait()
}
