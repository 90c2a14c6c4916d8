package promo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/coupon"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// UserCoupon is a customer's claimed coupon as clients see it.
type UserCoupon struct {
	ID         int64
	CouponID   int64
	UserID     string
	Status     enums.UserCouponStatus
	ValidFrom  time.Time
	ValidUntil time.Time
	OrderSn    *string
}

// view is uc as seen at now: an AVAILABLE coupon past its validity is
// EXPIRED (derived on every read; the close that would have made it
// AVAILABLE again writes EXPIRED instead).
func view(uc *ent.UserCoupon, now time.Time) *UserCoupon {
	st := uc.Status
	if st == enums.CouponAvailable && !now.Before(uc.ValidUntil) {
		st = enums.CouponExpired
	}
	return &UserCoupon{ID: uc.ID, CouponID: uc.CouponID, UserID: uc.UserID, Status: st,
		ValidFrom: uc.ValidFrom, ValidUntil: uc.ValidUntil, OrderSn: uc.OrderSn}
}

// ClaimCoupon gives user a coupon of their own, named by id (a coupon without a
// code) or by its code, in one transaction: the coupon's CAS on its total (claimed < total_quantity,
// while claimable), the customer's guarded counter of claims (at most
// per_customer_limit), and the user coupon. Each guard holds or nothing is
// written, so 1,000 racing claims of a coupon of 100 make exactly 100.
func (s *Service) ClaimCoupon(ctx context.Context, user string, id *int64, code *string) (*UserCoupon, error) {
	if (id == nil) == (code == nil) {
		return nil, fmt.Errorf("%w: give couponId or code, one of them", errs.InvalidInput)
	}
	var out *UserCoupon
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		now := s.now().Truncate(time.Second)
		q := tx.Coupon.Query()
		if id != nil {
			// A coupon with a code is claimed by its code only: by its id
			// it is not found, as an id that does not exist (ids are
			// sequential; an id must not stand in for the code).
			q = q.Where(coupon.ID(*id), coupon.CodeIsNil())
		} else {
			q = q.Where(coupon.Code(*code))
		}
		c, err := q.Only(ctx)
		if ent.IsNotFound(err) {
			return fmt.Errorf("%w: no such coupon", errs.NotFound)
		} else if err != nil {
			return err
		}
		if err := claimable(c, now); err != nil {
			return err
		}
		// The total: a CAS on the coupon's row, which holds it to COMMIT,
		// so the claims of one coupon queue here and each sees the last.
		upd := tx.Coupon.Update().Where(coupon.ID(c.ID), coupon.StoppedAtIsNil()).AddClaimed(1)
		if c.TotalQuantity != nil {
			upd = upd.Where(coupon.ClaimedLT(*c.TotalQuantity))
		}
		if n, err := upd.Save(ctx); err != nil {
			return err
		} else if n == 0 {
			return lostClaim(ctx, tx, c.ID, now)
		}
		limit := guard.Add(CouponClaims, c.ID, user, 1, c.PerCustomerLimit)
		if err := guard.AddCounters(ctx, tx, []guard.Counter{limit}); err != nil {
			return err
		}
		uc, err := tx.UserCoupon.Create().SetCouponID(c.ID).SetUserID(user).SetStatus(enums.CouponAvailable).
			SetValidFrom(now).SetValidUntil(now.AddDate(0, 0, c.ValidDays)).SetCreatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		out = view(uc, now)
		return nil
	})
	var limit *guard.CounterLimit
	if errors.As(err, &limit) {
		return nil, fmt.Errorf("%w: coupon %d allows %s at most its limit", ErrCouponLimitExceeded, limit.Scope, user)
	}
	return out, store.Classify(err)
}

// lostClaim says why the claim's CAS on coupon id changed no row: the
// coupon as it is now, read under its row's lock (the read before the CAS
// may predate a stop or the last claims), judged as any claim is
// (claimable): a stop that won is "was stopped", not sold out.
func lostClaim(ctx context.Context, tx *ent.Tx, id int64, now time.Time) error {
	c, err := tx.Coupon.Query().Where(coupon.ID(id)).Modify(store.UpdateLock).Only(ctx)
	if err != nil {
		return fmt.Errorf("reading coupon %d: %w", id, err)
	}
	if err := claimable(c, now); err != nil {
		return err
	}
	return fmt.Errorf("%w: coupon %d", ErrCouponSoldOut, id)
}
