package resolvers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// The issue's reproduction through the API: a lock-at-order goods of
// 100.00, a coupon of 30.00 off claimed; order A with it, closed by the
// timeout closer (the coupon AVAILABLE again); order B with it; the mock
// provider's notification pays A late, then B. A is PAID and flagged
// (needsReview, as the console shows it), B is not; the coupon is B's,
// used once; reconcile finds nothing.
func TestLatePaymentOfACouponTakenByAnotherOrderOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		signer, err := auth.NewSigner("promo-late-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		cfg := app.DefaultConfig()
		cfg.Checkout.OrderTTL = time.Second
		const secret = "mock-secret"
		cfg.Payments = payments.DefaultConfig().With(mock.New("mock", secret, "m-1", "CNY"))
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("admin", auth.Admin, time.Hour)
		bob, _ := signer.Issue("bob", auth.Customer, time.Hour)
		g, err := sf.Catalog.Create(ctx, catalog.CreateInput{Name: "耳机", Status: enums.GoodsOnShelf, StockMode: enums.LockAtOrder,
			DefaultSku: catalog.SkuTerms{SellPrice: 10000, Stock: 10}})
		if err != nil {
			t.Fatal(err)
		}
		item := strconv.FormatInt(g.SkuList(false)[0].ID, 10)
		var c, uc struct{ ID string }
		a := gqltest.Do(t, h, admin, `mutation { createCoupon(input: {name: "30 off", kind: AMOUNT_OFF, amountOff: "30.00"}) { id } }`, nil)
		if a.Code() != "" || json.Unmarshal(a.Data["createCoupon"], &c) != nil {
			t.Fatalf("createCoupon: %+v", a)
		}
		a = gqltest.Do(t, h, bob, `mutation($id: ID!) { claimCoupon(couponId: $id) { id } }`, map[string]any{"id": c.ID})
		if a.Code() != "" || json.Unmarshal(a.Data["claimCoupon"], &uc) != nil {
			t.Fatalf("claimCoupon: %+v", a)
		}
		type orderJSON struct {
			OrderSn, Amount, Discount, Status string
			NeedsReview                       bool
		}
		place := func(key string) orderJSON {
			t.Helper()
			var o orderJSON
			a := gqltest.Do(t, h, bob, `mutation($item: ID!, $uc: ID!, $key: String) { placeOrder(input: {items: [{itemId: $item, quantity: 1}], userCouponId: $uc}, idempotencyKey: $key) { orderSn amount discount status } }`,
				map[string]any{"item": item, "uc": uc.ID, "key": key})
			if a.Code() != "" || json.Unmarshal(a.Data["placeOrder"], &o) != nil || o.Amount != "70.00" {
				t.Fatalf("placeOrder %s: %+v (%+v), want 70.00", key, a, o)
			}
			return o
		}
		read := func(sn string) orderJSON {
			t.Helper()
			var o orderJSON
			a := gqltest.Do(t, h, admin, `query($sn: String!) { order(orderSn: $sn) { orderSn amount discount status needsReview } }`, map[string]any{"sn": sn})
			if a.Code() != "" || json.Unmarshal(a.Data["order"], &o) != nil {
				t.Fatalf("order %s: %+v", sn, a)
			}
			return o
		}
		pay := func(o orderJSON, id string) {
			t.Helper()
			body, _ := json.Marshal(mock.Notification{EventID: "ev-" + id, PaymentID: id, OrderSn: o.OrderSn, Amount: o.Amount,
				Currency: "CNY", MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()})
			req := httptest.NewRequest(http.MethodPost, "/payments/mock/notify", bytes.NewReader(body))
			req.Header.Set("X-Signature", mock.Sign(secret, body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				t.Fatalf("notification for %s: %d %s", o.OrderSn, rec.Code, rec.Body)
			}
		}

		a1 := place("a")
		// The timeout closer, as serve runs it, until A's second has passed.
		deadline := time.Now().Add(10 * time.Second)
		for read(a1.OrderSn).Status != string(enums.OrderClosed) {
			if time.Now().After(deadline) {
				t.Fatal("order A was not closed by the timeout closer within 10 s")
			}
			if _, err := sf.Checkout.CloseExpired(ctx); err != nil {
				t.Fatal(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		b := place("b")
		pay(a1, "pay-a")
		pay(b, "pay-b")
		ra, rb := read(a1.OrderSn), read(b.OrderSn)
		if ra.Status != "PAID" || !ra.NeedsReview || ra.Discount != "30.00" || rb.Status != "PAID" || rb.NeedsReview {
			t.Errorf("A %+v, B %+v; want both PAID with 30.00 off, A needing review, B not", ra, rb)
		}
		var st, holder string
		var used int64
		if err := db.SQL.QueryRowContext(ctx, "SELECT u.status, u.order_sn, c.used FROM user_coupon u JOIN coupon c ON c.id = u.coupon_id WHERE u.id = ?", uc.ID).Scan(&st, &holder, &used); err != nil {
			t.Fatal(err)
		}
		if st != "USED" || holder != b.OrderSn || used != 1 {
			t.Errorf("the coupon: %s by %s, used %d; want USED by %s, 1", st, holder, used, b.OrderSn)
		}
		if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v, want nothing", diffs, err)
		}
	})
}
