package cart

import (
	"context"
	"errors"
	"fmt"

	"storefront/ent"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/pricing"
	"storefront/internal/promo"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// A cart keeps the customer's chosen coupon (its id only: the user coupon
// is promo's). Whether it applies is decided on every read, by the code
// that decides it for the order (promo.Apply), on the lines at their
// current prices: so the discount a cart shows is the one its order gets,
// and a coupon that stopped applying (used by another order, expired, the
// threshold no longer met) shows as 0.00 with a warning rather than as a
// refusal at checkout only.

// SetCoupon chooses who's claimed coupon id for the cart token's order, or
// clears it (nil). A coupon that is not who's is refused (nothing changes);
// one of theirs is kept even when it does not apply now: the shopper may
// still add the lines that meet its threshold, and the read says why.
func (s *Service) SetCoupon(ctx context.Context, who, token string, id *int64) (*Cart, error) {
	if who == "" {
		return nil, fmt.Errorf("%w: a coupon is a customer's: sign in", errs.Unauthenticated)
	}
	if id != nil {
		if _, err := promo.OwnedBy(ctx, s.db.Client, who, *id, s.now()); err != nil {
			return nil, store.Classify(err)
		}
	}
	for range 3 {
		c, err := s.change(ctx, who, token, func(ctx context.Context, tx *ent.Tx, r *ent.Cart, _ []*ent.CartLine) error {
			if r.Owner != who {
				return errAnonymous
			}
			u := tx.Cart.UpdateOneID(r.ID)
			if id == nil {
				u = u.ClearUserCouponID()
			} else {
				u = u.SetUserCouponID(*id)
			}
			return u.Exec(ctx)
		})
		if !errors.Is(err, errNoRow) {
			return c, err
		}
		owner, _, ok := s.unstored(token, who)
		switch {
		case !ok:
			return nil, err
		case owner == "":
			return nil, errAnonymous
		}
		// A customer's cart handed out empty: the coupon goes to their open
		// cart, or stores this one under its id (as a first line would).
		open, err := s.openCart(ctx, owner)
		if err != nil {
			return nil, err
		}
		if open != nil {
			token = open.Token
			continue
		}
		if _, err := s.create(ctx, owner, token, nil); err != nil && !store.IsDuplicate(err) {
			return nil, err
		}
	}
	return nil, fmt.Errorf("%w: the customer's cart kept changing; retry", store.ErrUnavailable)
}

// errAnonymous: an anonymous cart has no customer whose coupon it could use.
var errAnonymous = fmt.Errorf("%w: sign in and attach the cart (cartBuyerIdentityUpdate) before choosing a coupon", errs.Forbidden)

// discount prices the chosen coupon into c's cost: promo.Apply on the
// lines as the order would have them, the coupon's adjustment quoted as
// checkout quotes it (pricing.Quote). A coupon that does not apply costs
// nothing and warns.
func (s *Service) discount(ctx context.Context, c *Cart) error {
	if c.userCouponID == 0 || c.Status != enums.CartOpen || len(c.Lines) == 0 {
		return nil
	}
	lines := make([]promo.Line, len(c.Lines))
	priced := make([]pricing.Line, len(c.Lines))
	for i, l := range c.Lines {
		lines[i] = promo.Line{GoodsID: l.GoodsID, Subtotal: l.Subtotal}
		priced[i] = pricing.Line{UnitPrice: l.UnitPrice, Quantity: l.Quantity}
	}
	a, err := promo.Apply(ctx, s.db.Client, c.owner, c.userCouponID, lines, s.now())
	if errors.Is(err, promo.ErrCouponNotApplicable) {
		c.Warnings = append(c.Warnings, &Warning{Code: WarnCouponNotApplicable, Message: err.Error()})
		return nil
	}
	if err != nil {
		return store.Classify(fmt.Errorf("applying the cart's coupon: %w", err))
	}
	q, err := pricing.Quote(priced, []pricing.Adjustment{a.Adjustment()})
	if err != nil {
		return err
	}
	c.Cost.Discount = q.Discount()
	c.Cost.Adjustments = checkout.Adjustments(&q, func(i int) int64 { return c.Lines[i].ItemID })
	return nil
}
