package promo

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"storefront/ent/usercoupon"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/paging"
)

const userCouponCursor = "usercoupon"

// UserCouponCursor is the cursor of user coupon id in myCoupons.
func UserCouponCursor(id int64) string { return paging.Cursor(userCouponCursor, id) }

// Mine pages through user's coupons, newest first, those of status only
// when it is given (AVAILABLE and EXPIRED as derived at now: view).
func (s *Service) Mine(ctx context.Context, user string, status *enums.UserCouponStatus, first int, after string) (*Page[*UserCoupon], error) {
	first, below, err := paging.Window(userCouponCursor, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
	}
	now := s.now()
	q := s.db.Client.UserCoupon.Query().Where(usercoupon.UserID(user))
	if below != 0 {
		q = q.Where(usercoupon.IDLT(below))
	}
	if status != nil {
		switch *status {
		case enums.CouponAvailable:
			q = q.Where(usercoupon.StatusEQ(enums.CouponAvailable), usercoupon.ValidUntilGT(now))
		case enums.CouponExpired:
			q = q.Where(usercoupon.Or(usercoupon.StatusEQ(enums.CouponExpired),
				usercoupon.And(usercoupon.StatusEQ(enums.CouponAvailable), usercoupon.ValidUntilLTE(now))))
		default:
			q = q.Where(usercoupon.StatusEQ(*status))
		}
	}
	rows, err := q.Order(usercoupon.ByID(sql.OrderDesc())).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	rows, more := paging.Trim(rows, first)
	out := make([]*UserCoupon, len(rows))
	for i, r := range rows {
		out[i] = view(r, now)
	}
	return &Page[*UserCoupon]{Nodes: out, HasNextPage: more}, nil
}

// UserCoupon is user's coupon id, or nil when it is not theirs (a cart's
// chosen coupon as its owner sees it).
func (s *Service) UserCoupon(ctx context.Context, user string, id int64) (*UserCoupon, error) {
	uc, err := OwnedBy(ctx, s.db.Client, user, id, s.now())
	if errors.Is(err, ErrCouponNotApplicable) {
		return nil, nil
	}
	return uc, store.Classify(err)
}
