package promo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"storefront/ent/usercoupon"
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
			c := amountOff(t, s, func(in *CreateInput) { in.TotalQuantity = ptr(int64(10_000)) })
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
					_, err := s.Claim(ctx, fmt.Sprintf("r%d-u%04d", round, i), &c.ID, nil)
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
			other.Range(func(k, _ any) bool { t.Errorf("round %d: a claim answered %v, want a claim or COUPON_NOT_APPLICABLE was stopped", round, k); return true })
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

func ptr[T any](v T) *T { return &v }
