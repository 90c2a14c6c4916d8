package promo

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Diff is one promotion counter that differs from the rows it counts.
type Diff struct {
	What    string // "coupon claimed", "coupon used", "purchase count"
	Scope   int64  // the coupon's or the goods' id
	Holder  string // the customer of a purchase count
	Counter int64
	Counted int64
}

func (d Diff) String() string {
	return fmt.Sprintf("%s %d %s: counter %d, rows %d", d.What, d.Scope, d.Holder, d.Counter, d.Counted)
}

// Reconcile lists every coupon whose claimed or used counter differs from
// its user coupons, and every purchase count that differs from its
// customer's units of the goods in counted lines of orders that stand (not
// CLOSED or REFUNDED). It corrects nothing.
func (s *Service) Reconcile(ctx context.Context) ([]Diff, error) {
	var out []Diff
	read := func(what, q string, args ...any) error {
		rs, err := s.db.SQL.QueryContext(ctx, q, args...)
		if err != nil {
			return store.Classify(fmt.Errorf("reconciling %s: %w", what, err))
		}
		defer rs.Close()
		for rs.Next() {
			d := Diff{What: what}
			if err := rs.Scan(&d.Scope, &d.Holder, &d.Counter, &d.Counted); err != nil {
				return err
			}
			out = append(out, d)
		}
		return rs.Err()
	}
	if err := read("coupon claimed", `SELECT c.id, '', c.claimed, (SELECT COUNT(*) FROM user_coupon u WHERE u.coupon_id = c.id)
FROM coupon c WHERE c.claimed <> (SELECT COUNT(*) FROM user_coupon u WHERE u.coupon_id = c.id) ORDER BY c.id`); err != nil {
		return nil, err
	}
	if err := read("coupon used", `SELECT c.id, '', c.used, (SELECT COUNT(*) FROM user_coupon u WHERE u.coupon_id = c.id AND u.status = ?)
FROM coupon c WHERE c.used <> (SELECT COUNT(*) FROM user_coupon u WHERE u.coupon_id = c.id AND u.status = ?) ORDER BY c.id`,
		string(enums.CouponUsed), string(enums.CouponUsed)); err != nil {
		return nil, err
	}
	standing := `SELECT COALESCE(SUM(l.quantity), 0) FROM order_line l JOIN orders o ON o.id = l.order_id
WHERE l.goods_id = p.goods_id AND o.user_id = p.user_id AND l.purchase_counted = TRUE AND o.status NOT IN (?, ?)`
	if err := read("purchase count", `SELECT p.goods_id, p.user_id, p.units, (`+standing+`) FROM purchase_count p
WHERE p.units <> (`+standing+`) ORDER BY p.goods_id, p.user_id`,
		string(enums.OrderClosed), string(enums.OrderRefunded), string(enums.OrderClosed), string(enums.OrderRefunded)); err != nil {
		return nil, err
	}
	return out, nil
}
