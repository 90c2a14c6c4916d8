package checkout

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	entoutbox "storefront/ent/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/testsupport/logtest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// The double discount: order A with a coupon, closed by the
// timeout closer (the coupon AVAILABLE again), order B uses the coupon,
// then A's late payment pays A (stock still there) and B is paid. A keeps
// its discount, flagged for a person (needsReview, CouponTakenByAnotherOrder,
// a WARN line); the coupon stays B's and is counted used once; reconcile
// finds nothing, and reports A once its flag is gone. A late payment that
// finds the coupon free takes it back: AVAILABLE, or EXPIRED by the close.
func TestLatePaymentOfAnOrderWhoseCouponWentToAnother(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		logs := logtest.Capture(t)
		f := setup(t, db)
		f.lockMode(t)
		ps := promo.New(db)
		item := f.skuID(t, "黑色,L")
		c := newCoupon(t, ps, nil)
		uc, err := ps.ClaimCoupon(ctx, "alice", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.advance(2 * time.Second) // past the claim's validFrom (real clock)
		place := func(key string) *Order {
			t.Helper()
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, UserCouponID: &uc.ID, IdempotencyKey: key})
			if err != nil {
				t.Fatalf("order %s: %v", key, err)
			}
			return o
		}
		closeAll := func() {
			t.Helper()
			f.advance(f.svc.cfg.OrderTTL + time.Minute)
			if n, err := f.svc.CloseExpired(ctx); err != nil || n != 1 {
				t.Fatalf("closer: %d, %v; want 1", n, err)
			}
		}
		a := place("a")
		closeAll()
		if st := statusOf(t, db, uc.ID); st != enums.CouponAvailable {
			t.Fatalf("after A's close: %s, want AVAILABLE", st)
		}
		b := place("b")
		if !f.pay(t, a.ID, Payer{ID: 1, Provider: "mock", PaymentID: "pay-a", Amount: a.Amount}) {
			t.Fatal("A's late payment did not pay it (stock is there)")
		}
		if !f.pay(t, b.ID, Payer{ID: 2, Provider: "mock", PaymentID: "pay-b", Amount: b.Amount}) {
			t.Fatal("B's payment did not pay it")
		}
		ra, rb := db.Client.Order.GetX(ctx, a.ID), db.Client.Order.GetX(ctx, b.ID)
		if ra.Status != enums.OrderPaid || !ra.NeedsReview || rb.Status != enums.OrderPaid || rb.NeedsReview {
			t.Errorf("A %s needs review %v, B %s needs review %v; want PAID true, PAID false", ra.Status, ra.NeedsReview, rb.Status, rb.NeedsReview)
		}
		row := db.Client.UserCoupon.GetX(ctx, uc.ID)
		if after, _ := ps.Get(ctx, c.ID); row.Status != enums.CouponUsed || row.OrderSn == nil || *row.OrderSn != b.OrderSn || after.Used != 1 {
			t.Errorf("the coupon: %s by %v, used %d; want USED by %s, used 1", row.Status, row.OrderSn, after.Used, b.OrderSn)
		}
		ev, err := db.Client.Outbox.Query().Where(entoutbox.Type(EventCouponTakenByAnotherOrder)).All(ctx)
		if err != nil || len(ev) != 1 || ev[0].AggregateID != a.OrderSn {
			t.Errorf("%d CouponTakenByAnotherOrder events (%v), want 1 about %s", len(ev), err, a.OrderSn)
		} else {
			var data struct{ OrderSn, UserCouponID, Discount, HeldBy, PaymentID string }
			if err := json.Unmarshal([]byte(ev[0].Payload), &data); err != nil || data.HeldBy != b.OrderSn || data.Discount != a.Discount.String() ||
				data.UserCouponID != itoa(uc.ID) || data.PaymentID != "pay-a" {
				t.Errorf("the event's data: %+v (%v), want held by %s, discount %s, user coupon %d, payment pay-a", data, err, b.OrderSn, a.Discount, uc.ID)
			}
		}
		if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, EventCouponTakenByAnotherOrder) || !strings.Contains(l, a.OrderSn) {
			t.Errorf("no WARN line naming %s and %s in the log:\n%s", EventCouponTakenByAnotherOrder, a.OrderSn, l)
		}
		if diffs, err := ps.Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v, want nothing (A is flagged)", diffs, err)
		}
		// The bug back (A paid with the discount, not flagged): reconcile
		// names A.
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET needs_review = ? WHERE id = ?", false, a.ID); err != nil {
			t.Fatal(err)
		}
		if diffs, err := ps.Reconcile(ctx); err != nil || len(diffs) != 1 || diffs[0].What != "order's coupon" || diffs[0].Holder != a.OrderSn {
			t.Errorf("reconcile with A unflagged: %v %v, want A's coupon reported", diffs, err)
		} else {
			t.Log(diffs[0])
		}
		// A USED coupon no paid order holds.
		if _, err := db.SQL.ExecContext(ctx, "UPDATE orders SET needs_review = ? WHERE id = ?", true, a.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE user_coupon SET order_sn = ? WHERE id = ?", "nobody", uc.ID); err != nil {
			t.Fatal(err)
		}
		diffs, err := ps.Reconcile(ctx)
		if err != nil || len(diffs) != 2 || diffs[0].What != "used coupon" || diffs[1].What != "order's coupon" || diffs[1].Holder != b.OrderSn {
			t.Errorf("reconcile with the coupon USED by nobody: %v %v, want it and B reported", diffs, err)
		}
		if _, err := db.SQL.ExecContext(ctx, "UPDATE user_coupon SET order_sn = ? WHERE id = ?", b.OrderSn, uc.ID); err != nil {
			t.Fatal(err)
		}

		// Free when the late payment comes: taken back, not flagged.
		for _, tc := range []struct {
			name  string
			valid int // the coupon's validDays
			wait  time.Duration
			want  enums.UserCouponStatus // after the close
		}{
			{"AVAILABLE", 7, 0, enums.CouponAvailable},
			{"EXPIRED", 1, 25 * time.Hour, enums.CouponExpired},
		} {
			c := newCoupon(t, ps, func(in *promo.CreateInput) { in.ValidDays = tc.valid })
			mine, err := ps.ClaimCoupon(ctx, "alice", &c.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			uc = mine
			f.advance(2 * time.Second)
			o := place(tc.name)
			f.advance(tc.wait)
			closeAll()
			if st := statusOf(t, db, uc.ID); st != tc.want {
				t.Fatalf("%s: after the close %s, want %s", tc.name, st, tc.want)
			}
			if !f.pay(t, o.ID, Payer{ID: 10, Provider: "mock", PaymentID: "pay-" + tc.name, Amount: o.Amount}) {
				t.Fatalf("%s: the late payment did not pay the order", tc.name)
			}
			r := db.Client.Order.GetX(ctx, o.ID)
			row := db.Client.UserCoupon.GetX(ctx, uc.ID)
			after, _ := ps.Get(ctx, c.ID)
			if r.Status != enums.OrderPaid || r.NeedsReview || row.Status != enums.CouponUsed || row.OrderSn == nil || *row.OrderSn != o.OrderSn || after.Used != 1 {
				t.Errorf("%s: order %s needs review %v, coupon %s by %v used %d; want PAID false, USED by %s, 1",
					tc.name, r.Status, r.NeedsReview, row.Status, row.OrderSn, after.Used, o.OrderSn)
			}
		}
		if n := f.eventsOf(t, EventCouponTakenByAnotherOrder); n != 1 {
			t.Errorf("%d CouponTakenByAnotherOrder events, want still 1", n)
		}
		if diffs, err := ps.Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile at the end: %v %v, want nothing", diffs, err)
		}
		f.clean(t, "at the end")
	})
}
