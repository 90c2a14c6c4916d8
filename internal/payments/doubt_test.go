package payments_test

import (
	"context"
	"testing"
	"time"

	"storefront/internal/payments"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A payment the provider reports still being paid (WeChat Pay USERPAYING)
// keeps its expired order open only until the doubt limit past its
// expiry: an order expired minutes ago stays UNPAID, one expired longer
// ago than the limit is closed.
func TestPaymentInDoubtKeptOpenOnlyUntilTheLimit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		ctx := context.Background()
		owner := auth.Principal{UserID: "u1", Role: auth.Customer}
		limit := payments.DefaultConfig().DoubtLimit
		recent, old := f.place(t, "doubt-recent"), f.place(t, "doubt-old")
		for o, ago := range map[string]time.Duration{recent.OrderSn: time.Minute, old.OrderSn: limit + time.Hour} {
			if _, err := f.svc.Start(ctx, owner, o, "wechatpay"); err != nil {
				t.Fatal(err)
			}
			f.wx.SetState(o, "USERPAYING")
			exp := time.Now().UTC().Add(-ago)
			if _, err := db.SQL.Exec("UPDATE orders SET created_at = ?, expires_at = ? WHERE order_sn = ?", exp.Add(-time.Hour), exp, o); err != nil {
				t.Fatal(err)
			}
			if _, err := db.SQL.Exec("UPDATE payment_start SET expires_at = ? WHERE order_sn = ?", exp, o); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := f.orders.CloseExpired(ctx); err != nil {
			t.Fatal(err)
		}
		if st := f.status(recent); st != enums.OrderUnpaid {
			t.Errorf("expired a minute ago, the buyer still paying: %s, want UNPAID", st)
		}
		if st := f.status(old); st != enums.OrderClosed {
			t.Errorf("expired %s ago (the doubt limit %s), the buyer still paying: %s, want CLOSED", limit+time.Hour, limit, st)
		}
	})
}
