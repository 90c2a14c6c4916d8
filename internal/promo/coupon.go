package promo

import (
	"context"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/coupon"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/internal/vocab/paging"
)

// Coupon is a coupon as clients see it; the GraphQL type Coupon binds to it.
type Coupon = ent.Coupon

// CreateInput is createCoupon's input.
type CreateInput struct {
	Name             string
	Kind             enums.CouponKind
	AmountOff        *money.Money
	PercentOff       *int
	MaxDiscount      *money.Money
	MinSubtotal      *money.Money
	GoodsIDs         []int64
	TotalQuantity    *int64
	PerCustomerLimit *int64
	ClaimStartsAt    *time.Time
	ClaimEndsAt      *time.Time
	ValidDays        int
	Code             *string
}

// Bounds of a coupon's numbers.
const (
	maxValidDays   = 3650
	maxPerCustomer = 1000
	// MaxScopeGoods bounds a coupon's goodsIds, MaxGoodsCoupons a product
	// page's coupons (the server's list bounds).
	MaxScopeGoods   = 1000
	MaxGoodsCoupons = 20
)

func (in *CreateInput) check() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{errs.InvalidInput}, a...)...)
	}
	switch {
	case in.Name == "" || utf8.RuneCountInString(in.Name) > 120:
		return bad("name: 1 to 120 characters")
	case in.Kind == enums.CouponAmountOff && (in.AmountOff == nil || *in.AmountOff <= 0 || in.PercentOff != nil || in.MaxDiscount != nil):
		return bad("AMOUNT_OFF takes a positive amountOff, and no percentOff or maxDiscount")
	case in.Kind == enums.CouponPercentOff && (in.PercentOff == nil || *in.PercentOff < 1 || *in.PercentOff > 99 || in.AmountOff != nil):
		return bad("PERCENT_OFF takes a percentOff of 1 to 99, and no amountOff")
	case in.Kind != enums.CouponAmountOff && in.Kind != enums.CouponPercentOff:
		return bad("kind %q", in.Kind)
	case in.MaxDiscount != nil && *in.MaxDiscount <= 0:
		return bad("maxDiscount must be positive")
	case in.MinSubtotal != nil && *in.MinSubtotal < 0:
		return bad("minSubtotal must not be negative")
	case len(in.GoodsIDs) > MaxScopeGoods:
		return bad("at most %d goods in a coupon's scope", MaxScopeGoods)
	case in.TotalQuantity != nil && *in.TotalQuantity < 1:
		return bad("totalQuantity must be at least 1 (null: unlimited)")
	case in.PerCustomerLimit != nil && (*in.PerCustomerLimit < 1 || *in.PerCustomerLimit > maxPerCustomer):
		return bad("perCustomerLimit: 1 to %d", maxPerCustomer)
	case in.ClaimStartsAt != nil && in.ClaimEndsAt != nil && !in.ClaimEndsAt.After(*in.ClaimStartsAt):
		return bad("claimEndsAt must be after claimStartsAt")
	case in.ValidDays < 1 || in.ValidDays > maxValidDays:
		return bad("validDays: 1 to %d", maxValidDays)
	case in.Code != nil && (*in.Code == "" || len(*in.Code) > 64):
		return bad("code: 1 to 64 bytes")
	}
	return nil
}

// Create creates a coupon; its code, if any, must be new.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Coupon, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	c := s.db.Client.Coupon.Create().SetName(in.Name).SetKind(in.Kind).SetValidDays(in.ValidDays).
		SetNillableTotalQuantity(in.TotalQuantity).SetNillableClaimStartsAt(in.ClaimStartsAt).
		SetNillableClaimEndsAt(in.ClaimEndsAt).SetNillableCode(in.Code).SetCreatedAt(s.now())
	if in.AmountOff != nil {
		c.SetAmountOff(*in.AmountOff)
	}
	if in.PercentOff != nil {
		c.SetPercentOff(*in.PercentOff)
	}
	if in.MaxDiscount != nil {
		c.SetMaxDiscount(*in.MaxDiscount)
	}
	if in.MinSubtotal != nil {
		c.SetMinSubtotal(*in.MinSubtotal)
	}
	if in.PerCustomerLimit != nil {
		c.SetPerCustomerLimit(*in.PerCustomerLimit)
	}
	if len(in.GoodsIDs) > 0 {
		c.SetGoodsIds(in.GoodsIDs)
	}
	out, err := c.Save(ctx)
	if store.IsDuplicate(err) {
		return nil, fmt.Errorf("%w: coupon code %q is taken", errs.InvalidInput, *in.Code)
	}
	return out, store.Classify(err)
}

// Stop ends a coupon's claiming for good; claimed coupons stay usable.
func (s *Service) Stop(ctx context.Context, id int64) (*Coupon, error) {
	_, err := s.db.Client.Coupon.Update().Where(coupon.ID(id), coupon.StoppedAtIsNil()).SetStoppedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.Get(ctx, id)
}

// Get reads a coupon.
func (s *Service) Get(ctx context.Context, id int64) (*Coupon, error) {
	c, err := s.db.Client.Coupon.Get(ctx, id)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: coupon %d", errs.NotFound, id)
	}
	return c, store.Classify(err)
}

const couponCursor = "coupon"

// CouponCursor is the cursor of coupon id in coupons.
func CouponCursor(id int64) string { return paging.Cursor(couponCursor, id) }

// Page is one page of a connection, newest first.
type Page[T any] struct {
	Nodes       []T
	HasNextPage bool
}

// Coupons pages through every coupon, newest first.
func (s *Service) Coupons(ctx context.Context, first int, after string) (*Page[*Coupon], error) {
	first, below, err := paging.Window(couponCursor, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
	}
	q := s.db.Client.Coupon.Query()
	if below != 0 {
		q = q.Where(coupon.IDLT(below))
	}
	rows, err := q.Order(coupon.ByID(sql.OrderDesc())).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	rows, more := paging.Trim(rows, first)
	return &Page[*Coupon]{Nodes: rows, HasNextPage: more}, nil
}

// claimable reports whether c can be claimed at now.
func claimable(c *Coupon, now time.Time) error {
	switch {
	case c.StoppedAt != nil:
		return fmt.Errorf("%w: coupon %d was stopped", ErrCouponNotApplicable, c.ID)
	case c.ClaimStartsAt != nil && now.Before(*c.ClaimStartsAt):
		return fmt.Errorf("%w: coupon %d can be claimed from %s", ErrCouponNotApplicable, c.ID, c.ClaimStartsAt.Format(time.RFC3339))
	case c.ClaimEndsAt != nil && !now.Before(*c.ClaimEndsAt):
		return fmt.Errorf("%w: coupon %d could be claimed until %s", ErrCouponNotApplicable, c.ID, c.ClaimEndsAt.Format(time.RFC3339))
	case c.TotalQuantity != nil && c.Claimed >= *c.TotalQuantity:
		return fmt.Errorf("%w: coupon %d (%d of %d claimed)", ErrCouponSoldOut, c.ID, c.Claimed, *c.TotalQuantity)
	}
	return nil
}

// ForGoods is the coupons without a code a customer can claim now whose
// scope holds goods (a product page's; at most 20, newest first). One with
// a code is for whoever was given the code, never listed.
func (s *Service) ForGoods(ctx context.Context, goods int64) ([]*Coupon, error) {
	now := s.now()
	rows, err := s.db.Client.Coupon.Query().Where(coupon.StoppedAtIsNil(), coupon.CodeIsNil()).
		Order(coupon.ByID(sql.OrderDesc())).Limit(200).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	var out []*Coupon
	for _, c := range rows {
		if claimable(c, now) == nil && (len(c.GoodsIds) == 0 || slices.Contains(c.GoodsIds, goods)) && len(out) < MaxGoodsCoupons {
			out = append(out, c)
		}
	}
	return out, nil
}
