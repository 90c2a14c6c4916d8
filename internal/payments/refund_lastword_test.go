package payments_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/ent/refund"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/paystub"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// lastWord is one order paid through a provider's stand-in, refunded, and
// the provider's notices about its refunds.
type lastWord struct {
	f     *pfix
	s     stand
	o     *ent.Order
	pid   string
	stock int64
}

func newLastWord(t *testing.T, f *pfix, s stand, key string) *lastWord {
	t.Helper()
	ctx := context.Background()
	w := &lastWord{f: f, s: s, pid: "PAY-" + key, stock: f.db.Client.Sku.GetX(ctx, f.itemID).Stock}
	w.o = f.place(t, key)
	if st, b := f.pay(t, s, w.o, w.pid, "EV-pay-"+key); !s.accepted(st, b) {
		t.Fatalf("payment: HTTP %d %q", st, b)
	}
	s.knobs.Set(func(k *paystub.Knobs) { k.Requests, k.Settle, k.Refuse, k.DropAnswers = nil, false, false, 0 })
	return w
}

// refundNos are the order's refunds, oldest first.
func (w *lastWord) refunds(t *testing.T) []*ent.Refund {
	t.Helper()
	return w.f.db.Client.Refund.Query().Where(refund.OrderID(w.o.ID)).Order(refund.ByID()).AllX(context.Background())
}

// wechat posts WeChat Pay's eventType notice of refund no, of the whole amount.
func (w *lastWord) wechat(t *testing.T, ev, eventType, no string) {
	t.Helper()
	h, body := w.f.wx.Notification(w.f.wx.RefundNotice(ev, eventType, no, w.pid, w.o.OrderSn, int64(w.o.Amount), int64(w.o.Amount)))
	if st, b := w.f.post(t, w.s.route, h, body); !w.s.accepted(st, b) {
		t.Fatalf("%s of %s: HTTP %d %q", eventType, no, st, b)
	}
}

// check asserts the order's books: its status, refunded money, review flag,
// the stock back to what it was before the order exactly when refunded,
// one OrderRefunded at most, and the refund requests the provider got.
func (w *lastWord) check(t *testing.T, when string, status enums.OrderStatus, refunded money.Money, review bool, requests int) {
	t.Helper()
	ctx := context.Background()
	db := w.f.db
	o := db.Client.Order.GetX(ctx, w.o.ID)
	if o.Status != status || o.RefundedAmount != refunded || o.NeedsReview != review {
		t.Errorf("%s: order %s, refunded %s of %s, needsReview %v; want %s, %s, %v",
			when, o.Status, o.RefundedAmount, o.Amount, o.NeedsReview, status, refunded, review)
	}
	stock := db.Client.Sku.GetX(ctx, w.f.itemID).Stock
	if want := w.stock - 2; status == enums.OrderRefunded && stock != w.stock || status != enums.OrderRefunded && stock != want {
		t.Errorf("%s: stock %d (before the order %d)", when, stock, w.stock)
	}
	if n := db.Client.Outbox.Query().Where(outbox.Type(checkout.EventOrderRefunded), outbox.AggregateID(w.o.OrderSn)).CountX(ctx); n > 1 {
		t.Errorf("%s: OrderRefunded = %d", when, n)
	}
	if got := w.s.knobs.Refunds(); len(got) != requests {
		t.Errorf("%s: the provider got refund requests %v, want %d", when, got, requests)
	}
}

func (w *lastWord) statuses(t *testing.T, when string, want ...enums.RefundStatus) {
	t.Helper()
	rs := w.refunds(t)
	ok := len(rs) == len(want)
	for i := 0; ok && i < len(rs); i++ {
		ok = rs[i].Status == want[i]
	}
	if !ok {
		var got []string
		for _, r := range rs {
			got = append(got, r.RefundNo+" "+string(r.Status)+" "+r.Failure)
		}
		t.Errorf("%s: refunds %q, want %v", when, got, want)
	}
}

// Issue 50's sequence through WeChat Pay: refundOrder, the provider
// answers PROCESSING; REFUND.ABNORMAL fails R1 (the order stays PAID);
// REFUND.SUCCESS for R1 (the abnormal refund completed by hand in the
// merchant platform) is a success: the order REFUNDED, its money and stock
// booked once, and a second refundOrder sends nothing.
func TestWeChatSuccessAfterAbnormalRefunds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[0], "wx-abnormal")
		if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
			t.Fatal(err)
		}
		r1 := w.refunds(t)[0].RefundNo
		w.wechat(t, "EV-ab-1", "REFUND.ABNORMAL", r1)
		w.statuses(t, "after ABNORMAL", enums.RefundFailed)
		w.check(t, "after ABNORMAL", enums.OrderPaid, 0, false, 1)

		w.wechat(t, "EV-ok-1", "REFUND.SUCCESS", r1)
		w.statuses(t, "after SUCCESS", enums.RefundSucceeded)
		w.check(t, "after SUCCESS", enums.OrderRefunded, w.o.Amount, false, 1)

		got, err := f.refund(ctx, w.o.OrderSn, "again")
		if err != nil || got.Status != enums.OrderRefunded {
			t.Errorf("a second refundOrder: %v, %v", got, err)
		}
		w.wechat(t, "EV-ok-2", "REFUND.SUCCESS", r1) // the same success under a new id
		w.statuses(t, "after the second refundOrder", enums.RefundSucceeded)
		w.check(t, "after the second refundOrder", enums.OrderRefunded, w.o.Amount, false, 1)
	})
}

// The same, when refundOrder sent R2 after the ABNORMAL (its answer lost):
// R1's success returns the money, so R2 is never sent again and, having
// reached the provider, flags the order; R2's own success later books
// nothing more.
func TestWeChatSuccessAfterAbnormalStopsTheNextRefund(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[0], "wx-next")
		if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
			t.Fatal(err)
		}
		r1 := w.refunds(t)[0].RefundNo
		w.wechat(t, "EV-ab-1", "REFUND.ABNORMAL", r1)
		w.s.knobs.Set(func(k *paystub.Knobs) { k.DropAnswers = 1 })
		if _, err := f.refund(ctx, w.o.OrderSn, "again"); err != nil {
			t.Fatal(err)
		}
		w.statuses(t, "R2 sent, its answer lost", enums.RefundFailed, enums.RefundPending)
		r2 := w.refunds(t)[1]

		w.wechat(t, "EV-ok-1", "REFUND.SUCCESS", r1)
		w.statuses(t, "after R1's SUCCESS", enums.RefundSucceeded, enums.RefundFailed)
		w.check(t, "after R1's SUCCESS", enums.OrderRefunded, w.o.Amount, true, 2)
		waitDue(t, db, r2.ID)
		if n, err := f.svc.SweepRefunds(ctx); err != nil || n != 0 {
			t.Errorf("the sweeper sent %d (%v), want none", n, err)
		}
		w.check(t, "after the sweep", enums.OrderRefunded, w.o.Amount, true, 2)

		w.wechat(t, "EV-ok-2", "REFUND.SUCCESS", r2.RefundNo)
		w.statuses(t, "after R2's SUCCESS", enums.RefundSucceeded, enums.RefundSucceeded)
		w.check(t, "after R2's SUCCESS", enums.OrderRefunded, w.o.Amount, true, 2)
	})
}

// R2 confirmed at once after R1's ABNORMAL, then R1 reported a success:
// the provider returned the money twice. R1 is SUCCEEDED as the provider
// says, its money booked on the ledger (it went back) but nothing else
// refunded again, and the order is flagged: reconcile shows its balance.
func TestWeChatSuccessAfterAnotherSucceededIsFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[0], "wx-twice")
		if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
			t.Fatal(err)
		}
		r1 := w.refunds(t)[0].RefundNo
		w.wechat(t, "EV-ab-1", "REFUND.ABNORMAL", r1)
		w.s.knobs.Set(func(k *paystub.Knobs) { k.Settle = true })
		if got, err := f.refund(ctx, w.o.OrderSn, "again"); err != nil || got.Status != enums.OrderRefunded {
			t.Fatalf("R2 settled at once: %v, %v", got, err)
		}
		w.check(t, "after R2", enums.OrderRefunded, w.o.Amount, false, 2)

		w.wechat(t, "EV-ok-1", "REFUND.SUCCESS", r1)
		w.statuses(t, "after R1's SUCCESS", enums.RefundSucceeded, enums.RefundSucceeded)
		w.check(t, "after R1's SUCCESS", enums.OrderRefunded, w.o.Amount, true, 2)
		log, err := f.svc.MoneyLog(ctx, w.o.ID)
		if err != nil {
			t.Fatal(err)
		}
		refunds := 0
		for _, e := range log {
			if e.Kind == enums.MoneyRefund && e.Amount == -w.o.Amount {
				refunds++
			}
		}
		if refunds != 2 {
			t.Errorf("money log %v: want both refunds of %s booked", log, w.o.Amount)
		}
		diffs, err := f.svc.ReconcileMoney(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) != 1 || diffs[0].Check != "balance" || !diffs[0].Review {
			t.Errorf("reconcile: %v; want the order's balance, flagged for review", diffs)
		}
	})
}

// Stripe: refund.failed, then the Refund succeeded after all
// (charge.refund.updated, status succeeded): booked as a success, once. A
// refund.failed after that keeps the books and flags the order.
func TestStripeSuccessAfterFailedRefunds(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[2], "st-failed")
		if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
			t.Fatal(err)
		}
		r1 := w.refunds(t)[0]
		event := func(id, typ, status string) {
			t.Helper()
			obj := paystub.RefundObject(r1.ProviderRefundID, w.pid, r1.RefundNo, int64(w.o.Amount), "cny", status)
			if status == "failed" {
				obj["failure_reason"] = "expired_or_canceled_card"
			}
			h, body := f.st.Event(id, typ, obj, "", "", time.Time{})
			if st, b := f.post(t, w.s.route, h, body); !w.s.accepted(st, b) {
				t.Fatalf("%s %s: HTTP %d %q", typ, status, st, b)
			}
		}
		event("evt_failed", "refund.failed", "failed")
		w.statuses(t, "after refund.failed", enums.RefundFailed)
		w.check(t, "after refund.failed", enums.OrderPaid, 0, false, 1)

		event("evt_succeeded", "charge.refund.updated", "succeeded")
		event("evt_succeeded_2", "refund.updated", "succeeded")
		w.statuses(t, "after succeeded", enums.RefundSucceeded)
		w.check(t, "after succeeded", enums.OrderRefunded, w.o.Amount, false, 1)

		event("evt_failed_after", "refund.failed", "failed")
		w.statuses(t, "after a failure after the success", enums.RefundSucceeded)
		w.check(t, "after a failure after the success", enums.OrderRefunded, w.o.Amount, true, 1)
	})
}

// Alipay: a refund whose answer was a refusal, then Alipay's notification
// that the trade was refunded under that refund's out_request_no
// (out_biz_no, refund_fee): the notification is the last word, a success
// booked once.
func TestAlipayRefundNotifiedAfterRefusal(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[1], "ali-refused")
		w.s.knobs.Set(func(k *paystub.Knobs) { k.Refuse = true })
		if got, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil || got.Status != enums.OrderPaid {
			t.Fatalf("refused refund: %v, %v", got, err)
		}
		w.statuses(t, "after the refusal", enums.RefundFailed)
		r1 := w.refunds(t)[0].RefundNo
		v := f.ali.PaidParams("NOTIFY-refund-1", &paystub.AlipayTrade{OutTradeNo: w.o.OrderSn, TradeNo: w.pid,
			Status: "TRADE_CLOSED", TotalAmount: w.o.Amount.String()})
		v.Set("refund_fee", w.o.Amount.String())
		v.Set("out_biz_no", r1)
		v.Set("gmt_refund", time.Now().In(time.FixedZone("CST", 8*3600)).Format("2006-01-02 15:04:05.000"))
		body := f.ali.Notification(v, nil)
		h := map[string][]string{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}}
		for range 2 {
			if st, b := f.post(t, w.s.route, h, body); !w.s.accepted(st, b) {
				t.Fatalf("refund notification: HTTP %d %q", st, b)
			}
		}
		w.statuses(t, "after the notification", enums.RefundSucceeded)
		w.check(t, "after the notification", enums.OrderRefunded, w.o.Amount, false, 1)
	})
}

// R1's REFUND.SUCCESS (after its ABNORMAL) at the same moment as a second
// refundOrder, many rounds: whichever wins, the money is booked once and
// the stock restored once; when R2 reached the provider the order is
// flagged, and when it did not, nothing is flagged.
func TestWeChatSuccessAfterAbnormalRacingRefundOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		outcomes := map[int]int{}
		for round := range 8 {
			w := newLastWord(t, f, f.stands[0], "wx-race-"+string(rune('a'+round)))
			if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
				t.Fatal(err)
			}
			r1 := w.refunds(t)[0].RefundNo
			w.wechat(t, "EV-ab-"+r1, "REFUND.ABNORMAL", r1)
			start := make(chan struct{})
			done := make(chan error, 1)
			go func() {
				<-start
				_, err := f.refund(ctx, w.o.OrderSn, "again")
				done <- err
			}()
			close(start)
			w.wechat(t, "EV-ok-"+r1, "REFUND.SUCCESS", r1)
			if err := <-done; err != nil {
				t.Errorf("round %d: the second refundOrder: %v", round, err)
			}
			sent := len(w.s.knobs.Refunds())
			outcomes[sent]++
			if sent == 2 {
				// R2 reached the provider (PROCESSING there): flagged, nothing booked twice.
				w.check(t, "R2 sent", enums.OrderRefunded, w.o.Amount, true, 2)
			} else {
				w.check(t, "R2 not sent", enums.OrderRefunded, w.o.Amount, false, 1)
			}
			if n, err := f.svc.SweepRefunds(ctx); err != nil || n != 0 {
				t.Errorf("round %d: the sweeper sent %d (%v), want none", round, n, err)
			}
		}
		t.Logf("provider requests per round: %v", outcomes)
	})
}

// Alipay's answer 10000 with fund_change N says no money moved with that
// call: the refund query decides. Not made there, the refund stays PENDING
// (the order PAID) and the sweeper sends the same number again; made, it
// is confirmed.
func TestAlipayNoFundChangeAsksTheRefundQuery(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		w := newLastWord(t, f, f.stands[1], "ali-nofund")
		f.ali.NoFundChange = 1
		if got, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil || got.Status != enums.OrderPaid {
			t.Fatalf("a refund answered fund_change N and not made: %v, %v; want the order still PAID", got, err)
		}
		w.statuses(t, "answered fund_change N, not made", enums.RefundPending)
		w.check(t, "answered fund_change N, not made", enums.OrderPaid, 0, false, 1)
		waitDue(t, db, w.refunds(t)[0].ID)
		if _, err := f.svc.SweepRefunds(ctx); err != nil {
			t.Fatal(err)
		}
		w.statuses(t, "sent again", enums.RefundSucceeded)
		w.check(t, "sent again", enums.OrderRefunded, w.o.Amount, false, 2)
		if p := w.s.knobs.Faults(); len(p) > 0 {
			t.Errorf("the stand-in saw requests break Alipay's rules: %q", p)
		}
	})
}

// The WeChat Pay sequence with the success after ABNORMAL dropped,
// as before the refund followed the provider's last word: reconcile
// reports the refund the provider confirmed and this shop did not book
// (the provider's word is recorded on the refund before anything acts on
// it), and with the last word followed reconcile is clean.
func TestReconcileCatchesADroppedSuccessAfterAbnormal(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		for _, drop := range []bool{true, false} {
			w := newLastWord(t, f, f.stands[0], fmt.Sprint("wx-drop-", drop))
			if _, err := f.refund(ctx, w.o.OrderSn, "returned"); err != nil {
				t.Fatal(err)
			}
			r1 := w.refunds(t)[0].RefundNo
			w.wechat(t, fmt.Sprint("EV-ab-", drop), "REFUND.ABNORMAL", r1)
			restore := func() {}
			if drop {
				restore = payments.IgnoreLateSuccess()
			}
			w.wechat(t, fmt.Sprint("EV-ok-", drop), "REFUND.SUCCESS", r1)
			restore()
			diffs, err := f.svc.ReconcileMoney(ctx)
			if err != nil {
				t.Fatal(err)
			}
			found := slices.ContainsFunc(diffs, func(d payments.MoneyDiff) bool {
				return d.Check == "refund the provider confirmed" && d.Detail == r1
			})
			if found != drop {
				t.Errorf("success dropped %v: reconcile reports %v", drop, diffs)
			}
			if drop {
				// The books of the first order are left as the bug left them.
				db.SQL.ExecContext(ctx, "UPDATE refund SET provider_status = NULL WHERE refund_no = ?", r1)
			}
		}
	})
}
