//go:build galera

package e2e

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/platform/auth"
)

// A coupon of 100 claimed by 300 customers through the three nodes at once:
// exactly 100 claims on every node, every other answer COUPON_SOLD_OUT
// (certification conflicts are retried by the claim's transaction, and
// UNAVAILABLE by the client, as a client would).
func TestGaleraCouponClaims(t *testing.T) {
	c := galera(t)
	specs := c.database(t)
	servers := serveOnEach(t, specs)
	dbs := openEach(t, specs)
	admin := tokenFor(t, "galera-admin", auth.Admin)
	r, _, err := post(context.Background(), servers[0].URL, admin, "", `mutation { createCoupon(input: {name: "g", kind: AMOUNT_OFF, amountOff: "1.00", totalQuantity: 100}) { id } }`, nil)
	if err != nil || len(r.Errors) > 0 {
		t.Fatalf("createCoupon: %v %v", err, r)
	}
	var created struct{ CreateCoupon struct{ ID string } }
	if err := jsonUnmarshal(r.Data, &created); err != nil {
		t.Fatal(err)
	}
	var claimed, soldOut atomic.Int64
	var other sync.Map
	var wg sync.WaitGroup
	sem := make(chan struct{}, 48)
	for i := range 300 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			token := tokenFor(t, fmt.Sprintf("claimer-%d", i), auth.Customer)
			for try := 0; try < 20; try++ {
				r, _, err := post(context.Background(), servers[i%len(servers)].URL, token, "", `mutation($id: ID!) { claimCoupon(couponId: $id) { id } }`,
					map[string]any{"id": created.CreateCoupon.ID})
				switch {
				case err != nil:
					other.Store(err.Error(), true)
					return
				case len(r.Errors) == 0:
					claimed.Add(1)
					return
				case r.Code() == "COUPON_SOLD_OUT":
					soldOut.Add(1)
					return
				case r.Code() == "UNAVAILABLE":
					time.Sleep(20 * time.Millisecond)
				default:
					other.Store(r.Code()+": "+r.Errors[0].Message, true)
					return
				}
			}
		}()
	}
	wg.Wait()
	other.Range(func(k, _ any) bool { t.Errorf("an answer neither a claim nor COUPON_SOLD_OUT: %v", k); return true })
	if claimed.Load() != 100 || soldOut.Load() != 200 {
		t.Errorf("%d claimed, %d sold out; want 100, 200", claimed.Load(), soldOut.Load())
	}
	for n, db := range dbs {
		var rows, counter int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM user_coupon").Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRow("SELECT claimed FROM coupon").Scan(&counter); err != nil {
			t.Fatal(err)
		}
		if rows != 100 || counter != 100 {
			t.Errorf("node %d: %d user coupons, claimed %d; want 100 and 100", n, rows, counter)
		}
	}
}
