package promo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/usercoupon"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

func amountOff(t *testing.T, s *Service, edit func(*CreateInput)) *Coupon {
	t.Helper()
	off := money.MustParse("5.00")
	in := CreateInput{Name: "5 off", Kind: enums.CouponAmountOff, AmountOff: &off, ValidDays: 7}
	if edit != nil {
		edit(&in)
	}
	c, err := s.Create(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// stopCoupon racing claims: 600 customers (64 at a time) claim a coupon of
// 10,000 and an admin stops it once 50 have it. Every claim either has it
// or is COUPON_NOT_APPLICABLE "was stopped" (never COUPON_SOLD_OUT: there
// were thousands left), and the claimed counter, the user coupons and the
// successes agree. Several rounds, each on a new coupon.
func TestStopRacingClaims(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		var stoppedSeen atomic.Int64
		for round := range 3 {
			c := amountOff(t, s, func(in *CreateInput) { in.TotalQuantity = new(int64(10_000)) })
			var ok, stopped atomic.Int64
			var once sync.Once
			var other sync.Map
			sem := make(chan struct{}, 64)
			var wg sync.WaitGroup
			for i := range 600 {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer func() { <-sem; wg.Done() }()
					_, err := s.ClaimCoupon(ctx, fmt.Sprintf("r%d-u%04d", round, i), &c.ID, nil)
					switch {
					case err == nil:
						if ok.Add(1) == 50 {
							once.Do(func() {
								wg.Add(1)
								go func() {
									defer wg.Done()
									if _, err := s.Stop(ctx, c.ID); err != nil {
										t.Errorf("stop: %v", err)
									}
								}()
							})
						}
					case errors.Is(err, ErrCouponNotApplicable) && strings.Contains(err.Error(), "was stopped"):
						stopped.Add(1)
					default:
						other.Store(err.Error(), true)
					}
				}()
			}
			wg.Wait()
			other.Range(func(k, _ any) bool {
				t.Errorf("round %d: a claim answered %v, want a claim or COUPON_NOT_APPLICABLE was stopped", round, k)
				return true
			})
			rows, err := db.Client.UserCoupon.Query().Where(usercoupon.CouponID(c.ID)).Count(ctx)
			if err != nil {
				t.Fatal(err)
			}
			after, err := s.Get(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if int64(rows) != ok.Load() || after.Claimed != ok.Load() || after.StoppedAt == nil || ok.Load()+stopped.Load() != 600 {
				t.Errorf("round %d: %d claimed, %d stopped, %d user coupons, claimed counter %d, stopped at %v; want the claims, the rows and the counter equal, and 600 answers",
					round, ok.Load(), stopped.Load(), rows, after.Claimed, after.StoppedAt)
			}
			stoppedSeen.Add(stopped.Load())
		}
		if stoppedSeen.Load() == 0 {
			t.Error("no claim lost to the stop in any round: the race was not run")
		}
		if diffs, err := s.Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v", diffs, err)
		}
	})
}

// The claim promo.Locks takes a user coupon only within its window of use
// at the claim's time (its Takeable condition, under the row's lock): at
// or past validUntil, or before validFrom, the claim is lost and the row
// stays AVAILABLE; inside it, LOCKED by its order. The read before every
// claim (ApplyOwned's usable) refuses the same coupon at the same time, so
// an order never reaches the claim with one outside its window: that
// layer is checked here too.
func TestCouponClaimHoldsItsWindow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		c := amountOff(t, s, func(in *CreateInput) { in.ValidDays = 1 })
		uc, err := s.ClaimCoupon(ctx, "alice", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		take := func(at time.Time, sn string) error {
			return store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				return guard.TakeRows(ctx, tx, []guard.RowClaim{Lock([]int64{uc.ID}, []string{sn}, at)})
			})
		}
		owned, err := new(Terms).ReadOwned(ctx, db.Client, []int64{uc.ID})
		if err != nil {
			t.Fatal(err)
		}
		lines := []Line{{GoodsID: 1, Subtotal: money.MustParse("100.00")}}
		for _, at := range []time.Time{uc.ValidUntil, uc.ValidUntil.Add(time.Hour), uc.ValidFrom.Add(-time.Second)} {
			var lost *guard.ClaimLost
			if err := take(at, "late"); !errors.As(err, &lost) || !errors.Is(err, ErrCouponNotApplicable) {
				t.Errorf("the claim at %v (valid %v to %v): %v, want it lost (COUPON_NOT_APPLICABLE)", at, uc.ValidFrom, uc.ValidUntil, err)
			}
			if _, err := ApplyOwned(owned[uc.ID], "alice", uc.ID, lines, at); !errors.Is(err, ErrCouponNotApplicable) {
				t.Errorf("the read's check at %v: %v, want COUPON_NOT_APPLICABLE", at, err)
			}
		}
		if st := db.Client.UserCoupon.GetX(ctx, uc.ID).Status; st != enums.CouponAvailable {
			t.Fatalf("after the lost claims: %s, want AVAILABLE", st)
		}
		in := uc.ValidUntil.Add(-time.Minute)
		if _, err := ApplyOwned(owned[uc.ID], "alice", uc.ID, lines, in); err != nil {
			t.Errorf("the read's check within the window: %v", err)
		}
		if err := take(in, "in-time"); err != nil {
			t.Fatalf("the claim within the window: %v", err)
		}
		if r := db.Client.UserCoupon.GetX(ctx, uc.ID); r.Status != enums.CouponLocked || r.OrderSn == nil || *r.OrderSn != "in-time" {
			t.Errorf("after the claim: %s by %v, want LOCKED by in-time", r.Status, r.OrderSn)
		}
	})
}
