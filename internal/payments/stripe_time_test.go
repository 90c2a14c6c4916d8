package payments_test

import (
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A Stripe event correctly signed for a time more than the tolerance (5
// minutes) ahead is refused and writes nothing, as one signed that long
// ago is: the tolerance is both ways. Within it (a clock a little ahead)
// the event pays the order.
func TestStripeRefusesFutureTimestamps(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		f := providerSetup(t, db)
		s := f.stands[2]
		o := f.place(t, "stripe-future")
		pi := map[string]any{"id": "pi_FUTURE", "object": "payment_intent", "amount": int64(o.Amount), "currency": "cny",
			"status": "succeeded", "metadata": map[string]string{"orderSn": o.OrderSn}}
		for _, ahead := range []time.Duration{310 * time.Second, time.Hour, 365 * 24 * time.Hour, -310 * time.Second} {
			before := f.written(t)
			h, body := f.st.Event("evt_future_"+ahead.String(), "payment_intent.succeeded", pi, "", "", time.Now().Add(ahead))
			if st, b := f.post(t, s.route, h, body); st != 400 {
				t.Errorf("signed %s from now: HTTP %d %q, want 400", ahead, st, b)
			}
			if after := f.written(t); after != before || f.status(o) != enums.OrderUnpaid {
				t.Errorf("signed %s from now wrote something: %v -> %v, order %s", ahead, before, after, f.status(o))
			}
		}
		h, body := f.st.Event("evt_future_ok", "payment_intent.succeeded", pi, "", "", time.Now().Add(4*time.Minute))
		if st, b := f.post(t, s.route, h, body); !s.accepted(st, b) || f.status(o) != enums.OrderPaid {
			t.Errorf("signed 4 minutes ahead: HTTP %d %q, order %s; want accepted and PAID", st, b, f.status(o))
		}
	})
}
