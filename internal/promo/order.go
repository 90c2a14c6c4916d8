package promo

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/coupon"
	"storefront/ent/usercoupon"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// A claimed coupon's life with its order, every step a CAS on its status
// in the order's own transaction (checkout calls these), so each happens
// once however many requests race:
//
//	AVAILABLE --Lock (placeOrder)--> LOCKED --Use (payment)--> USED
//	LOCKED --Release (cancel, timeout close)--> AVAILABLE, or EXPIRED past its validity
//
// A refund leaves it USED: the money came back, the promotion was spent.

// Applied is what a coupon does to an order being placed.
type Applied struct {
	UserCouponID int64
	Discount     money.Money
	Scope        []bool // the lines that share the discount
}

// Apply reads user's coupon id through q and says what it takes off lines
// at now, or why it does not apply (ErrCouponNotApplicable). It writes
// nothing: Lock, in the order's transaction, makes it the order's.
func Apply(ctx context.Context, client *ent.Client, user string, id int64, lines []Line, now time.Time) (Applied, error) {
	uc, err := owned(ctx, client, user, id)
	if err != nil {
		return Applied{}, err
	}
	if err := usable(uc, now); err != nil {
		return Applied{}, err
	}
	c, err := client.Coupon.Get(ctx, uc.CouponID)
	if err != nil {
		return Applied{}, err
	}
	d, scope, err := Discount(c, lines)
	if err != nil {
		return Applied{}, err
	}
	return Applied{UserCouponID: id, Discount: d, Scope: scope}, nil
}

// owned reads user's coupon id; one that does not exist or is someone
// else's is the same answer (ErrCouponNotApplicable), so ids cannot be probed.
func owned(ctx context.Context, client *ent.Client, user string, id int64) (*ent.UserCoupon, error) {
	uc, err := client.UserCoupon.Get(ctx, id)
	switch {
	case ent.IsNotFound(err) || err == nil && uc.UserID != user:
		return nil, fmt.Errorf("%w: user coupon %d is not yours", ErrCouponNotApplicable, id)
	case err != nil:
		return nil, err
	}
	return uc, nil
}

// Owned is user's coupon id as seen at now, read through client, or
// ErrCouponNotApplicable when it is not user's (a cart choosing it).
func Owned(ctx context.Context, client *ent.Client, user string, id int64, now time.Time) (*UserCoupon, error) {
	uc, err := owned(ctx, client, user, id)
	if err != nil {
		return nil, err
	}
	return view(uc, now), nil
}

// usable says why uc cannot be used at now, if it cannot.
func usable(uc *ent.UserCoupon, now time.Time) error {
	switch v := view(uc, now); {
	case v.Status != enums.CouponAvailable:
		return fmt.Errorf("%w: user coupon %d is %s", ErrCouponNotApplicable, uc.ID, v.Status)
	case now.Before(uc.ValidFrom):
		return fmt.Errorf("%w: user coupon %d is valid from %s", ErrCouponNotApplicable, uc.ID, uc.ValidFrom.Format(time.RFC3339))
	}
	return nil
}

// Lock makes user's coupon id the order orderSn's: AVAILABLE and valid at
// now → LOCKED. Another order that locked it first wins; this one is then
// ErrCouponNotApplicable and its transaction must not commit.
func Lock(ctx context.Context, tx *ent.Tx, id int64, user, orderSn string, now time.Time) error {
	n, err := tx.UserCoupon.Update().Where(usercoupon.ID(id), usercoupon.UserID(user),
		usercoupon.StatusEQ(enums.CouponAvailable), usercoupon.ValidUntilGT(now), usercoupon.ValidFromLTE(now)).
		SetStatus(enums.CouponLocked).SetOrderSn(orderSn).Save(ctx)
	if err != nil {
		return fmt.Errorf("locking user coupon %d: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: user coupon %d was used or locked by another order meanwhile", ErrCouponNotApplicable, id)
	}
	return nil
}

// Use marks the coupon order orderSn locked as USED (its payment) and
// counts it on its coupon; a second call changes nothing. After a close
// gave the coupon back (a late payment of a closed order), it is taken
// again if still AVAILABLE; if another order has it, this order keeps its
// discount: the money was already paid (docs/checkout.md).
func Use(ctx context.Context, tx *ent.Tx, id int64, orderSn string) error {
	n, err := tx.UserCoupon.Update().Where(usercoupon.ID(id),
		usercoupon.Or(usercoupon.And(usercoupon.StatusEQ(enums.CouponLocked), usercoupon.OrderSn(orderSn)),
			usercoupon.StatusEQ(enums.CouponAvailable))).
		SetStatus(enums.CouponUsed).SetOrderSn(orderSn).Save(ctx)
	if err != nil || n == 0 {
		return err
	}
	uc, err := tx.UserCoupon.Get(ctx, id)
	if err != nil {
		return err
	}
	return tx.Coupon.Update().Where(coupon.ID(uc.CouponID)).AddUsed(1).Exec(ctx)
}

// Release gives the coupon order orderSn locked back at now (its cancel
// or timeout close): AVAILABLE within its validity, EXPIRED after. Only
// the order that holds it releases it, once.
func Release(ctx context.Context, tx *ent.Tx, id int64, orderSn string, now time.Time) error {
	_, err := tx.UserCoupon.Update().Where(usercoupon.ID(id), usercoupon.StatusEQ(enums.CouponLocked),
		usercoupon.OrderSn(orderSn), usercoupon.ValidUntilGT(now)).
		SetStatus(enums.CouponAvailable).ClearOrderSn().Save(ctx)
	if err != nil {
		return fmt.Errorf("releasing user coupon %d: %w", id, err)
	}
	_, err = tx.UserCoupon.Update().Where(usercoupon.ID(id), usercoupon.StatusEQ(enums.CouponLocked),
		usercoupon.OrderSn(orderSn)).SetStatus(enums.CouponExpired).ClearOrderSn().Save(ctx)
	return err
}
