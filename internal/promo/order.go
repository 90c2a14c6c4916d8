package promo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/coupon"
	"storefront/ent/usercoupon"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// A claimed coupon's life with its order, every step a CAS on its status
// in the order's own transaction (checkout calls these), so each happens
// once however many requests race:
//
//	AVAILABLE --Lock (placeOrder)--> LOCKED --Use (payment)--> USED
//	LOCKED --Release (cancel, timeout close)--> AVAILABLE, or EXPIRED past its validity
//	AVAILABLE or EXPIRED --Use (a late payment of the closed order)--> USED
//
// A refund leaves it USED: the money came back, the promotion was spent.

// Applied is what a coupon does to an order being placed.
type Applied struct {
	UserCouponID int64
	Discount     money.Money
	Scope        []bool // the lines that share the discount
	Label        string // the coupon's name
}

// Owned is a customer's coupon as read, with its coupon.
type Owned struct {
	*ent.UserCoupon
	Coupon *ent.Coupon
}

// Terms remembers coupons' terms: what Discount reads of a coupon (its
// kind, amounts, threshold and scope) is written once, by Create, and
// never changed (Stop ends claiming, which a claimed coupon does not
// need), so a batch of orders reads only its customers' coupons, one
// statement, and not their coupons again. The zero value is ready.
type Terms struct{ m sync.Map } // coupon id → *ent.Coupon

// ReadOwned reads the customers' coupons ids with their coupons (an
// unknown id is missing), in one statement when their coupons' terms are
// remembered.
func (t *Terms) ReadOwned(ctx context.Context, client *ent.Client, ids []int64) (map[int64]*Owned, error) {
	ucs, err := client.UserCoupon.Query().Where(usercoupon.IDIn(ids...)).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading user coupons: %w", err)
	}
	var missing []int64
	for _, uc := range ucs {
		if _, ok := t.m.Load(uc.CouponID); !ok {
			missing = append(missing, uc.CouponID)
		}
	}
	if len(missing) > 0 {
		cs, err := client.Coupon.Query().Where(coupon.IDIn(missing...)).All(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading coupons: %w", err)
		}
		for _, c := range cs {
			t.m.Store(c.ID, c)
		}
	}
	out := make(map[int64]*Owned, len(ucs))
	for _, uc := range ucs {
		o := &Owned{UserCoupon: uc}
		if c, ok := t.m.Load(uc.CouponID); ok {
			o.Coupon = c.(*ent.Coupon)
		}
		out[uc.ID] = o
	}
	return out, nil
}

// Apply reads user's coupon id through client and says what it takes off
// lines at now, or why it does not apply (ErrCouponNotApplicable). It
// writes nothing: Lock's claim, in the order's transaction, makes it the
// order's.
func Apply(ctx context.Context, client *ent.Client, user string, id int64, lines []Line, now time.Time) (Applied, error) {
	owned, err := new(Terms).ReadOwned(ctx, client, []int64{id})
	if err != nil {
		return Applied{}, err
	}
	return ApplyOwned(owned[id], user, id, lines, now)
}

// ApplyOwned is Apply on a coupon read (nil: none of that id).
func ApplyOwned(o *Owned, user string, id int64, lines []Line, now time.Time) (Applied, error) {
	if o == nil || o.UserID != user || o.Coupon == nil {
		return Applied{}, fmt.Errorf("%w: user coupon %d is not yours", ErrCouponNotApplicable, id)
	}
	if err := usable(o.UserCoupon, now); err != nil {
		return Applied{}, err
	}
	d, scope, err := Discount(o.Coupon, lines)
	if err != nil {
		return Applied{}, err
	}
	return Applied{UserCouponID: id, Discount: d, Scope: scope, Label: o.Coupon.Name}, nil
}

// OwnedBy is user's coupon id as seen at now, read through client, or
// ErrCouponNotApplicable when it is not user's (a cart choosing it): one
// that does not exist or is someone else's is the same answer, so ids
// cannot be probed.
func OwnedBy(ctx context.Context, client *ent.Client, user string, id int64, now time.Time) (*UserCoupon, error) {
	uc, err := client.UserCoupon.Get(ctx, id)
	switch {
	case ent.IsNotFound(err) || err == nil && uc.UserID != user:
		return nil, fmt.Errorf("%w: user coupon %d is not yours", ErrCouponNotApplicable, id)
	case err != nil:
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

// Locks is the claim that makes a customer's coupon an order's: AVAILABLE
// and valid at the order's time → LOCKED with the order's number, in the
// order's transaction before its stock (a guard.RowClaim), on the plain
// path and in a batch alike. Another order that locked it first wins; this
// one's claim is then lost (ErrCouponNotApplicable) and its transaction
// must not commit. Whose coupon it is was checked when it was read
// (ApplyOwned): a user coupon never changes hands.
var Locks = &guard.RowClaimKind{Table: usercoupon.Table, ID: usercoupon.FieldID, State: usercoupon.FieldStatus,
	Holder: usercoupon.FieldOrderSn, Free: string(enums.CouponAvailable), Held: string(enums.CouponLocked),
	Takeable: validAt, Lost: errCouponTaken}

var errCouponTaken = fmt.Errorf("%w: it was used or locked by another order meanwhile", ErrCouponNotApplicable)

// validAt is a user coupon's window of use, checked under the row's lock
// (usable checked it on the row read).
func validAt(w store.Statement, at time.Time) {
	w.SQL(usercoupon.FieldValidFrom + " <= ")
	w.Time(at)
	w.SQL(" AND " + usercoupon.FieldValidUntil + " > ")
	w.Time(at)
}

// Lock is the claim of the orders' coupons: ids[i] by orderSns[i], at.
func Lock(ids []int64, orderSns []string, at time.Time) guard.RowClaim {
	return guard.RowClaim{Kind: Locks, IDs: ids, Holders: orderSns, At: at}
}

// Use makes the coupon the paying order orderSn's: USED by it, counted on
// its coupon once. It reports whether the coupon is that order's now and,
// when it is not, the order that holds it instead. An order paid in its
// time holds it LOCKED. A late payment of an order the timeout closer
// closed (payAfterClose) takes it back when it is free: AVAILABLE, or
// EXPIRED by that close (no order holds it; the order was priced within
// its validity). When another order has locked or used it meanwhile,
// nothing changes: the caller flags the order, whose discount no coupon
// pays for (docs/checkout.md).
func Use(ctx context.Context, tx *ent.Tx, id int64, orderSn string) (taken bool, holder string, err error) {
	n, err := tx.UserCoupon.Update().Where(usercoupon.ID(id),
		usercoupon.Or(usercoupon.And(usercoupon.StatusEQ(enums.CouponLocked), usercoupon.OrderSn(orderSn)),
			usercoupon.StatusEQ(enums.CouponAvailable),
			usercoupon.And(usercoupon.StatusEQ(enums.CouponExpired), usercoupon.OrderSnIsNil()))).
		SetStatus(enums.CouponUsed).SetOrderSn(orderSn).Save(ctx)
	if err != nil {
		return false, "", fmt.Errorf("using user coupon %d: %w", id, err)
	}
	if n == 0 {
		// Why not, read under the row's lock (the latest row, not an older
		// snapshot): already this order's, or another's.
		var rows []struct {
			Status  string  `sql:"status"`
			OrderSn *string `sql:"order_sn"`
		}
		err := tx.UserCoupon.Query().Where(usercoupon.ID(id)).Modify(func(s *sql.Selector) {
			s.Select(s.C(usercoupon.FieldStatus), s.C(usercoupon.FieldOrderSn))
			store.UpdateLock(s)
		}).Scan(ctx, &rows)
		if err != nil {
			return false, "", fmt.Errorf("reading user coupon %d: %w", id, err)
		}
		if len(rows) == 1 && rows[0].OrderSn != nil {
			holder = *rows[0].OrderSn
		}
		return holder == orderSn && rows[0].Status == string(enums.CouponUsed), holder, nil
	}
	uc, err := tx.UserCoupon.Get(ctx, id)
	if err != nil {
		return false, "", err
	}
	return true, orderSn, tx.Coupon.Update().Where(coupon.ID(uc.CouponID)).AddUsed(1).Exec(ctx)
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
