package payments_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/outbox"
	"storefront/ent/payment"
	"storefront/ent/paymentevent"
	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

func TestMergeRules(t *testing.T) {
	const absent = enums.PaymentStatus("")
	P, A, R, F := enums.PaymentPending, enums.PaymentPaid, enums.PaymentRefunded, enums.PaymentFailed
	for _, tc := range []struct{ current, incoming, want enums.PaymentStatus }{
		{P, A, A}, {A, A, A}, {F, A, A}, {R, A, R}, // notification: PAID, never out of REFUNDED
		{A, F, A}, {P, F, F}, // a failure never downgrades PAID
		{A, R, R}, {R, R, R},
		{absent, A, absent}, // Merge applies to existing rows; absent rows are inserted as incoming
	} {
		if got := payments.Merge(tc.current, tc.incoming); got != tc.want {
			t.Errorf("Merge(%q, %q) = %q, want %q", tc.current, tc.incoming, got, tc.want)
		}
	}
}

type fixture struct {
	db     *store.DB
	svc    *payments.Service
	as     *aftersale.Service
	srv    *httptest.Server
	itemID int64
}

// admin is who refunds orders in these tests.
var admin = aftersale.Actor{ID: "admin", Admin: true}

// refund is refundOrder, which the after-sales decide and payments sends.
func (f *fixture) refund(ctx context.Context, orderSn, reason string) (*checkout.Order, error) {
	return f.as.RefundOrder(ctx, admin, orderSn, reason)
}

const secret = "test-secret"

func setup(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	cfg := payments.DefaultConfig()
	cfg = cfg.With(mock.New("mock", secret, "m-1", "CNY"), mock.New("other", "other-secret", "m-2", "CNY"))
	_, svc, as := app.Orders(db, checkout.DefaultConfig(), cfg, aftersale.DefaultConfig())
	mux := http.NewServeMux()
	mux.Handle("POST /payments/{provider}/notify", server.NotifyHandler(svc, cfg.MaxBody))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	item := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.StockGT(10)).FirstX(context.Background())
	return &fixture{db: db, svc: svc, as: as, srv: srv, itemID: item.ID}
}

var orderN int

// newOrder writes an order row directly: these tests are about payments,
// not about how checkout creates orders.
func (f *fixture) newOrder(t *testing.T, status enums.OrderStatus) *ent.Order {
	t.Helper()
	return f.newOrderOf(t, status, "218.00")
}

// newOrderOf is newOrder with another amount.
func (f *fixture) newOrderOf(t *testing.T, status enums.OrderStatus, amount string) *ent.Order {
	t.Helper()
	ctx := context.Background()
	orderN++
	o := f.db.Client.Order.Create().SetOrderSn(fmt.Sprintf("T%d%06d", time.Now().UnixNano()%1e9, orderN)).
		SetUserID("u1").SetStatus(status).SetAmount(money.MustParse(amount)).SetCurrency("CNY").
		SetExpiresAt(time.Now().Add(time.Hour)).SaveX(ctx)
	f.db.Client.OrderLine.Create().SetOrderID(o.ID).SetItemID(f.itemID).SetGoodsID(1).SetGoodsName("T").
		SetUnitPrice(money.MustParse("109.00")).SetQuantity(2).ExecX(ctx)
	return o
}

func (f *fixture) notify(t *testing.T, provider string, n mock.Notification, sig string) int {
	t.Helper()
	body, _ := json.Marshal(n)
	if sig == "" {
		sig = mock.Sign(secret, body)
	}
	req, _ := http.NewRequest("POST", f.srv.URL+"/payments/"+provider+"/notify", bytes.NewReader(body))
	req.Header.Set("X-Signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// signed returns n's body and its signature, for calling Notify directly
// (which reports its Outcome, where the HTTP answer says only "success").
func signed(n mock.Notification) ([]byte, string) {
	body, _ := json.Marshal(n)
	return body, mock.Sign(secret, body)
}

func success(o *ent.Order, event, paymentID string) mock.Notification {
	return mock.Notification{EventID: event, PaymentID: paymentID, OrderSn: o.OrderSn, Amount: o.Amount.String(),
		Currency: "CNY", MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()}
}

func (f *fixture) counts(t *testing.T) [4]int {
	ctx := context.Background()
	return [4]int{f.db.Client.Payment.Query().CountX(ctx), f.db.Client.PaymentEvent.Query().CountX(ctx),
		f.db.Client.Outbox.Query().CountX(ctx), f.db.Client.Order.Query().Where(order.StatusNEQ(enums.OrderUnpaid)).CountX(ctx)}
}

func TestSameNotificationFiveTimesConcurrently(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		o := f.newOrder(t, enums.OrderUnpaid)
		volBefore := db.Client.Sku.GetX(ctx, f.itemID).Volume
		var wg sync.WaitGroup
		codes := make([]int, 5)
		for i := range codes {
			wg.Add(1)
			go func() { defer wg.Done(); codes[i] = f.notify(t, "mock", success(o, "ev-1", "pay-1"), "") }()
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Errorf("notification %d: HTTP %d, want 200", i, c)
			}
		}
		if s := db.Client.Order.GetX(ctx, o.ID).Status; s != enums.OrderPaid {
			t.Errorf("order status %s, want PAID", s)
		}
		if n := db.Client.Outbox.Query().Where(outbox.Type(checkout.EventOrderPaid)).CountX(ctx); n != 1 {
			t.Errorf("OrderPaid events = %d, want 1", n)
		}
		if v := db.Client.Sku.GetX(ctx, f.itemID).Volume - volBefore; v != 2 {
			t.Errorf("volume added %d, want 2 (once)", v)
		}
		if n := db.Client.Payment.Query().CountX(ctx); n != 1 {
			t.Errorf("payments = %d, want 1", n)
		}
	})
}

func TestRedirectAndNotificationInAnyOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		owner := auth.Principal{UserID: "u1", Role: auth.Customer}

		a := f.newOrder(t, enums.OrderUnpaid) // redirect first
		if p, err := f.svc.Return(ctx, owner, "mock", "pa", a.OrderSn); err != nil || p.Status != enums.PaymentPending {
			t.Fatalf("redirect: %+v %v", p, err)
		}
		f.notify(t, "mock", success(a, "ea", "pa"), "")
		b := f.newOrder(t, enums.OrderUnpaid) // notification first
		f.notify(t, "mock", success(b, "eb", "pb"), "")
		for _, tc := range []struct {
			o   *ent.Order
			pid string
		}{{a, "pa"}, {b, "pb"}} {
			p, err := f.svc.Return(ctx, owner, "mock", tc.pid, tc.o.OrderSn)
			if err != nil || p.Status != enums.PaymentPaid {
				t.Errorf("%s after both: %+v %v, want PAID", tc.pid, p, err)
			}
		}
		// The same payment id under another provider is another payment.
		if p, err := f.svc.Return(ctx, owner, "other", "pa", a.OrderSn); err != nil || p.Status != enums.PaymentPending {
			t.Errorf("other provider, same id: %+v %v", p, err)
		}
		if _, err := f.svc.Return(ctx, auth.Principal{UserID: "someone-else", Role: auth.Customer}, "mock", "pz", a.OrderSn); err == nil {
			t.Error("a stranger's redirect was accepted")
		}
	})
}

func TestFiftyRacingRedirectsAndNotifications(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		o := f.newOrder(t, enums.OrderUnpaid)
		owner := auth.Principal{UserID: "u1", Role: auth.Customer}
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				time.Sleep(time.Duration(rand.IntN(5)) * time.Millisecond)
				if i%2 == 0 {
					if _, err := f.svc.Return(ctx, owner, "mock", "race", o.OrderSn); err != nil {
						t.Errorf("redirect %d: %v", i, err)
					}
				} else if c := f.notify(t, "mock", success(o, fmt.Sprintf("race-%d", i), "race"), ""); c != 200 {
					t.Errorf("notification %d: HTTP %d", i, c)
				}
			}()
		}
		wg.Wait()
		rows := db.Client.Payment.Query().AllX(ctx)
		if len(rows) != 1 || rows[0].Status != enums.PaymentPaid {
			t.Fatalf("payments after the race: %d rows, %+v; want one PAID", len(rows), rows)
		}
		if n := db.Client.Outbox.Query().Where(outbox.Type(checkout.EventOrderPaid)).CountX(ctx); n != 1 {
			t.Errorf("OrderPaid events = %d, want 1", n)
		}
	})
}

func TestRefusedNotificationsWriteNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		o := f.newOrder(t, enums.OrderUnpaid)
		before := f.counts(t)
		good := success(o, "e", "p")
		for _, tc := range []struct {
			name     string
			provider string
			mutate   func(*mock.Notification)
			sig      string
			want     int
		}{
			{"wrong signature", "mock", nil, "sha256=00", 401},
			{"other provider's secret", "other", nil, "", 401},
			{"unknown provider", "nope", nil, "", 400},
			{"wrong amount", "mock", func(n *mock.Notification) { n.Amount = "0.01" }, "", 400},
			{"wrong currency", "mock", func(n *mock.Notification) { n.Currency = "USD" }, "", 400},
			{"wrong merchant", "mock", func(n *mock.Notification) { n.MerchantID = "evil" }, "", 400},
			{"unknown order", "mock", func(n *mock.Notification) { n.OrderSn = "NOPE" }, "", 400},
			{"stale timestamp", "mock", func(n *mock.Notification) { n.Timestamp -= 3600 }, "", 400},
			{"future timestamp", "mock", func(n *mock.Notification) { n.Timestamp += 3600 }, "", 400},
			// The input rule (package input): a NUL failed PostgreSQL's insert with a 500.
			{"NUL in the payment id", "mock", func(n *mock.Notification) { n.PaymentID = "p\x00" }, "", 400},
			{"control character in the event id", "mock", func(n *mock.Notification) { n.EventID = "e\x1b" }, "", 400},
		} {
			n := good
			if tc.mutate != nil {
				tc.mutate(&n)
			}
			if got := f.notify(t, tc.provider, n, tc.sig); got != tc.want {
				t.Errorf("%s: HTTP %d, want %d", tc.name, got, tc.want)
			}
		}
		if after := f.counts(t); after != before {
			t.Errorf("refusals wrote something: counts %v -> %v", before, after)
		}
	})
}

func TestPaymentForClosedOrderIsKeptAndFlagged(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		o := f.newOrder(t, enums.OrderClosed)
		stockBefore := db.Client.Sku.GetX(ctx, f.itemID).Stock
		for range 2 { // a repeat must not flag or emit twice
			if c := f.notify(t, "mock", success(o, "late", "pl"), ""); c != 200 {
				t.Fatalf("HTTP %d", c)
			}
		}
		got := db.Client.Order.GetX(ctx, o.ID)
		if got.Status != enums.OrderClosed || !got.NeedsReview {
			t.Errorf("order = %s needsReview=%v, want CLOSED and flagged", got.Status, got.NeedsReview)
		}
		if p := db.Client.Payment.Query().OnlyX(ctx); p.Status != enums.PaymentPaid {
			t.Errorf("payment %s, want PAID (money is never dropped)", p.Status)
		}
		if n := db.Client.Outbox.Query().Where(outbox.Type(checkout.EventPaymentForClosedOrder)).CountX(ctx); n != 1 {
			t.Errorf("PaymentForClosedOrder events = %d, want 1", n)
		}
		if s := db.Client.Sku.GetX(ctx, f.itemID).Stock; s != stockBefore {
			t.Errorf("stock moved %d -> %d", stockBefore, s)
		}
	})
}

func TestRefundTwiceConcurrently(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := setup(t, db)
		ctx := context.Background()
		co := checkout.New(db, checkout.DefaultConfig())
		item := f.itemID
		start := db.Client.Sku.GetX(ctx, item).Stock
		placed, err := co.Place(ctx, checkout.PlaceInput{UserID: "u1", Items: []checkout.ItemInput{{ItemID: &item, Quantity: 2}}, IdempotencyKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		n := mock.Notification{EventID: "e", PaymentID: "p", OrderSn: placed.OrderSn, Amount: placed.Amount.String(),
			Currency: placed.Currency, MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()}
		if c := f.notify(t, "mock", n, ""); c != 200 {
			t.Fatalf("payment: HTTP %d", c)
		}
		if s := db.Client.Sku.GetX(ctx, item).Stock; s != start-2 {
			t.Fatalf("stock after order = %d, want %d", s, start-2)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i := range errs {
			wg.Add(1)
			go func() { defer wg.Done(); _, errs[i] = f.refund(ctx, placed.OrderSn, "customer returned it") }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("refund %d: %v", i, err)
			}
		}
		if s := db.Client.Sku.GetX(ctx, item).Stock; s != start {
			t.Errorf("stock after refunds = %d, want %d (restored exactly once)", s, start)
		}
		o := db.Client.Order.Query().Where(order.OrderSn(placed.OrderSn)).OnlyX(ctx)
		if o.Status != enums.OrderRefunded {
			t.Errorf("order %s, want REFUNDED", o.Status)
		}
		if p := db.Client.Payment.Query().OnlyX(ctx); p.Status != enums.PaymentRefunded {
			t.Errorf("payment %s, want REFUNDED", p.Status)
		}
		var sums []struct{ Sum int64 }
		db.Client.StockLog.Query().Where(stocklog.ItemID(item)).Aggregate(ent.Sum(stocklog.FieldChangeNum)).ScanX(ctx, &sums)
		if len(sums) != 1 || sums[0].Sum != start {
			t.Errorf("ledger sum %v, want %d (balanced)", sums, start)
		}
		if n := db.Client.StockLog.Query().Where(stocklog.ItemID(item), stocklog.ChangeType(4)).CountX(ctx); n != 1 {
			t.Errorf("refund ledger rows = %d, want 1", n)
		}
		// Refunding an unpaid order is refused and changes nothing.
		other, _ := co.Place(ctx, checkout.PlaceInput{UserID: "u1", Items: []checkout.ItemInput{{ItemID: &item, Quantity: 1}}, IdempotencyKey: "k2"})
		if _, err := f.refund(ctx, other.OrderSn, "x"); !errors.Is(err, checkout.ErrInvalidOrderState) {
			t.Errorf("refund of UNPAID order: %v, want ErrInvalidOrderState", err)
		}
	})
}

// The payment_event row is what stops a repeat: without it the repeats would
// still end right (the later CASes find the order PAID) but would run the
// upsert again, so the payment row's version tells them apart.
func TestSameSignedEventFiveTimes(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		check := func(t *testing.T, f *fixture, o *ent.Order, outcomes []payments.Outcome, wantVersion int64) {
			t.Helper()
			applied := 0
			for i, oc := range outcomes {
				switch oc {
				case payments.OutcomeApplied:
					applied++
				case payments.OutcomeDuplicate:
				default:
					t.Errorf("notification %d: outcome %q", i, oc)
				}
			}
			if applied != 1 {
				t.Errorf("outcomes %v: %d applied, want exactly 1 (the repeats OutcomeDuplicate)", outcomes, applied)
			}
			if n := db.Client.PaymentEvent.Query().Where(paymentevent.EventID("ev-" + o.OrderSn)).CountX(ctx); n != 1 {
				t.Errorf("payment_event rows = %d, want 1", n)
			}
			if p := db.Client.Payment.Query().Where(payment.PaymentID("pay-" + o.OrderSn)).OnlyX(ctx); p.Version != wantVersion || p.Status != enums.PaymentPaid {
				t.Errorf("payment version %d status %s, want version %d (untouched by the repeats) and PAID", p.Version, p.Status, wantVersion)
			}
			if n := db.Client.Outbox.Query().Where(outbox.AggregateID(o.OrderSn)).CountX(ctx); n != 1 {
				t.Errorf("outbox rows for the order = %d, want 1 (OrderPaid)", n)
			}
		}
		f := setup(t, db)
		t.Run("sequential", func(t *testing.T) {
			o := f.newOrder(t, enums.OrderUnpaid)
			body, sig := signed(success(o, "ev-"+o.OrderSn, "pay-"+o.OrderSn))
			var outcomes []payments.Outcome
			var version int64
			for i := range 5 {
				oc, err := f.svc.Notify(ctx, "mock", mock.Header(sig), body)
				if err != nil {
					t.Fatalf("notification %d: %v", i, err)
				}
				if i == 0 {
					version = db.Client.Payment.Query().Where(payment.PaymentID("pay-" + o.OrderSn)).OnlyX(ctx).Version
				}
				outcomes = append(outcomes, oc)
			}
			if outcomes[0] != payments.OutcomeApplied {
				t.Errorf("first notification: %q, want applied", outcomes[0])
			}
			check(t, f, o, outcomes, version)
		})
		t.Run("concurrent", func(t *testing.T) {
			o := f.newOrder(t, enums.OrderUnpaid)
			body, sig := signed(success(o, "ev-"+o.OrderSn, "pay-"+o.OrderSn))
			outcomes := make([]payments.Outcome, 5)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range outcomes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					var err error
					if outcomes[i], err = f.svc.Notify(ctx, "mock", mock.Header(sig), body); err != nil {
						t.Errorf("notification %d: %v", i, err)
					}
				}()
			}
			close(start)
			wg.Wait()
			check(t, f, o, outcomes, 1) // inserted by the one applied notification
		})
	})
}
