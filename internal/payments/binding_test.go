package payments_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/payment"
	"storefront/ent/paymentevent"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/logtest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// A (provider, payment id) belongs to the order that first named it, by
// redirect or by notification; naming it for another order is refused and
// changes neither order (issue 15, item 4).
func TestPaymentIDBelongsToOneOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		owner := auth.Principal{UserID: "u1", Role: auth.Customer}
		log := logtest.Capture(t)

		t.Run("redirect first", func(t *testing.T) {
			a := f.newOrderOf(t, enums.OrderUnpaid, "645.00")
			b := f.newOrderOf(t, enums.OrderUnpaid, "89.00")
			if p, err := f.svc.Return(ctx, owner, "mock", "PB-squat", a.OrderSn); err != nil || p.Status != enums.PaymentPending {
				t.Fatalf("redirect for A: %+v %v", p, err)
			}
			before := f.counts(t)
			if c := f.notify(t, "mock", success(b, "squat-1", "PB-squat"), ""); c != 400 {
				t.Errorf("SUCCESS for B with A's payment id: HTTP %d, want 400", c)
			}
			if after := f.counts(t); after != before {
				t.Errorf("the refusal wrote something: counts (payments, events, outbox, orders not UNPAID) %v -> %v", before, after)
			}
			if n := db.Client.PaymentEvent.Query().Where(paymentevent.EventID("squat-1")).CountX(ctx); n != 0 {
				t.Errorf("payment_event rows for the refused event = %d, want 0", n)
			}
			unchanged(t, db, b, enums.OrderUnpaid)
			unchanged(t, db, a, enums.OrderUnpaid)
			if p := db.Client.Payment.Query().Where(payment.PaymentID("PB-squat")).OnlyX(ctx); p.OrderID != a.ID || p.Status != enums.PaymentPending || p.Version != 1 {
				t.Errorf("A's payment after the refusal: order %d status %s version %d, want order %d PENDING version 1", p.OrderID, p.Status, p.Version, a.ID)
			}
			if p, err := f.svc.ForOrder(ctx, b.ID); err != nil || p != nil {
				t.Errorf("B's payment: %+v %v, want none", p, err)
			}
			if !strings.Contains(log.String(), "belongs to another order") {
				t.Errorf("no log line names the reason; log:\n%s", log)
			}
			// The redirect for B with the same id is refused too, and A's own
			// notification still pays A.
			if _, err := f.svc.Return(ctx, owner, "mock", "PB-squat", b.OrderSn); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("redirect for B with A's payment id: %v, want ErrInvalidInput", err)
			}
			if c := f.notify(t, "mock", success(a, "squat-2", "PB-squat"), ""); c != 200 {
				t.Errorf("SUCCESS for A: HTTP %d, want 200", c)
			}
			unchanged(t, db, a, enums.OrderPaid)
		})

		t.Run("notification first", func(t *testing.T) {
			c := f.newOrderOf(t, enums.OrderUnpaid, "89.00")
			d := f.newOrderOf(t, enums.OrderUnpaid, "645.00")
			if code := f.notify(t, "mock", success(c, "first-1", "PC-first"), ""); code != 200 {
				t.Fatalf("SUCCESS for C: HTTP %d", code)
			}
			pc := db.Client.Payment.Query().Where(payment.PaymentID("PC-first")).OnlyX(ctx)
			before := f.counts(t)
			if _, err := f.svc.Return(ctx, owner, "mock", "PC-first", d.OrderSn); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("redirect for D with C's payment id: %v, want ErrInvalidInput", err)
			}
			if code := f.notify(t, "mock", success(d, "first-2", "PC-first"), ""); code != 400 {
				t.Errorf("SUCCESS for D with C's payment id: HTTP %d, want 400", code)
			}
			if after := f.counts(t); after != before {
				t.Errorf("the refusals wrote something: counts %v -> %v", before, after)
			}
			unchanged(t, db, d, enums.OrderUnpaid)
			unchanged(t, db, c, enums.OrderPaid)
			if p := db.Client.Payment.Query().Where(payment.PaymentID("PC-first")).OnlyX(ctx); p.OrderID != c.ID || p.Version != pc.Version {
				t.Errorf("C's payment: order %d version %d, want order %d version %d (untouched)", p.OrderID, p.Version, c.ID, pc.Version)
			}
		})
	})
}

// unchanged checks an order's status and that it was not flagged.
func unchanged(t *testing.T, db *store.DB, o *ent.Order, want enums.OrderStatus) {
	t.Helper()
	got := db.Client.Order.GetX(context.Background(), o.ID)
	if got.Status != want || got.NeedsReview {
		t.Errorf("order %s: %s needsReview=%v, want %s and not flagged", o.OrderSn, got.Status, got.NeedsReview, want)
	}
}

// The binding holds under a race: notifications for A and for B naming one
// payment id, all at once, and in even rounds redirects for A too (which
// usually win). Whichever order took the id first owns it; every request
// for the other order is refused and wrote nothing.
func TestPaymentIDRaceBindsOneOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		owner := auth.Principal{UserID: "u1", Role: auth.Customer}
		logtest.Capture(t) // the refusals' log lines are expected here
		owners := map[string]int{}
		for round := range 6 {
			a := f.newOrderOf(t, enums.OrderUnpaid, "645.00")
			b := f.newOrderOf(t, enums.OrderUnpaid, "89.00")
			pid := fmt.Sprintf("race-%d", round)
			const each = 4
			var (
				wg                              sync.WaitGroup
				mu                              sync.Mutex
				redirectsA, notifiedA, notified []string // what each kind was answered
			)
			answer := func(list *[]string, s string) { mu.Lock(); *list = append(*list, s); mu.Unlock() }
			start := make(chan struct{})
			for i := range each {
				wg.Add(2)
				if round%2 == 0 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						_, err := f.svc.Return(ctx, owner, "mock", pid, a.OrderSn)
						switch {
						case err == nil:
							answer(&redirectsA, "ok")
						case errors.Is(err, errs.InvalidInput):
							answer(&redirectsA, "INVALID_INPUT")
						default:
							t.Errorf("redirect for A: %v", err)
						}
					}()
				}
				go func() {
					defer wg.Done()
					<-start
					answer(&notifiedA, fmt.Sprint(f.notify(t, "mock", success(a, fmt.Sprintf("%s-a%d", pid, i), pid), "")))
				}()
				go func() {
					defer wg.Done()
					<-start
					answer(&notified, fmt.Sprint(f.notify(t, "mock", success(b, fmt.Sprintf("%s-b%d", pid, i), pid), "")))
				}()
			}
			close(start)
			wg.Wait()

			p := db.Client.Payment.Query().Where(payment.PaymentID(pid)).OnlyX(ctx)
			events := db.Client.PaymentEvent.Query().Where(paymentevent.EventIDHasPrefix(pid + "-")).CountX(ctx)
			all := func(list []string, want string) bool {
				for _, s := range list {
					if s != want {
						return false
					}
				}
				return true
			}
			switch p.OrderID {
			case a.ID:
				owners["A"]++
				if !all(redirectsA, "ok") || !all(notifiedA, "200") || !all(notified, "400") {
					t.Errorf("round %d, A owns %s: redirects for A %v, notifications for A %v, for B %v; want ok, 200, 400",
						round, pid, redirectsA, notifiedA, notified)
				}
				unchanged(t, db, b, enums.OrderUnpaid)
				unchanged(t, db, a, enums.OrderPaid)
				if events != each {
					t.Errorf("round %d: payment_event rows %d, want %d (A's only)", round, events, each)
				}
			case b.ID:
				owners["B"]++
				if !all(redirectsA, "INVALID_INPUT") || !all(notifiedA, "400") || !all(notified, "200") {
					t.Errorf("round %d, B owns %s: redirects for A %v, notifications for A %v, for B %v; want INVALID_INPUT, 400, 200",
						round, pid, redirectsA, notifiedA, notified)
				}
				unchanged(t, db, a, enums.OrderUnpaid)
				unchanged(t, db, b, enums.OrderPaid)
				if events != each {
					t.Errorf("round %d: payment_event rows %d, want %d (B's only)", round, events, each)
				}
			default:
				t.Fatalf("round %d: payment %s belongs to order %d, neither A nor B", round, pid, p.OrderID)
			}
			if p.Status != enums.PaymentPaid {
				t.Errorf("round %d: payment %s, want PAID", round, p.Status)
			}
			if n := db.Client.Order.Query().Where(order.IDIn(a.ID, b.ID), order.StatusEQ(enums.OrderPaid)).CountX(ctx); n != 1 {
				t.Errorf("round %d: %d of A and B PAID, want 1", round, n)
			}
		}
		t.Logf("owners over the rounds: %v", owners)
	})
}
