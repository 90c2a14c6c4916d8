package promo

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// Diff is one promotion counter that differs from the rows it counts, or
// one claimed coupon and the orders that carry it that disagree.
type Diff struct {
	// "coupon claimed", "coupon used", "purchase count"; "used coupon"
	// (a USED user coupon whose order is not a paid order carrying it),
	// "order's coupon" (an order that carries a coupon's discount and does
	// not hold the coupon, and is not flagged for review).
	What    string
	Scope   int64  // the coupon's or the goods' id; the user coupon's
	Holder  string // the customer of a purchase count; the order's number
	Counter int64
	Counted int64
}

func (d Diff) String() string {
	switch d.What {
	case "used coupon":
		return fmt.Sprintf("%s %d: USED by order %q, which is not a paid order carrying it", d.What, d.Scope, d.Holder)
	case "order's coupon":
		return fmt.Sprintf("%s %d: order %s carries its discount and does not hold it (not flagged for review)", d.What, d.Scope, d.Holder)
	}
	return fmt.Sprintf("%s %d %s: counter %d, rows %d", d.What, d.Scope, d.Holder, d.Counter, d.Counted)
}

// The statuses of orders a payment paid (a refund leaves the coupon
// USED): an order of these that carries a coupon holds it USED, an
// UNPAID one LOCKED.
var paid = []any{string(enums.OrderPaid), string(enums.OrderPartiallyShipped), string(enums.OrderShipped),
	string(enums.OrderCompleted), string(enums.OrderRefunded)}

// Reconcile lists every coupon whose claimed or used counter differs from
// its user coupons, every purchase count that differs from its customer's
// units of the goods in counted lines of orders that stand (not CLOSED or
// REFUNDED), every USED user coupon no paid order carrying it holds, and
// every order carrying a coupon it does not hold (Diff.What). It corrects
// nothing.
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
	// Every USED user coupon is held by one paid order that carries it (its
	// order_sn names one order at most), and every order that carries a
	// coupon's discount holds it, unless a person was asked to review it
	// (needs_review: a late payment found it taken, payPromo). Two paid
	// orders on one coupon are one of these, whichever holds it.
	in := store.Marks(len(paid))
	if err := read("used coupon", `SELECT u.id, COALESCE(u.order_sn, ''), 1, 0 FROM user_coupon u WHERE u.status = ?
AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.order_sn = u.order_sn AND o.user_coupon_id = u.id AND o.status IN (`+in+`))
ORDER BY u.id`, append([]any{string(enums.CouponUsed)}, paid...)...); err != nil {
		return nil, err
	}
	if err := read("order's coupon", `SELECT o.user_coupon_id, o.order_sn, 1, 0 FROM orders o
WHERE o.user_coupon_id IS NOT NULL AND o.needs_review = FALSE AND (
 (o.status = ? AND NOT EXISTS (SELECT 1 FROM user_coupon u WHERE u.id = o.user_coupon_id AND u.status = ? AND u.order_sn = o.order_sn))
 OR (o.status IN (`+in+`) AND NOT EXISTS (SELECT 1 FROM user_coupon u WHERE u.id = o.user_coupon_id AND u.status = ? AND u.order_sn = o.order_sn)))
ORDER BY o.id`, append(append([]any{string(enums.OrderUnpaid), string(enums.CouponLocked)}, paid...), string(enums.CouponUsed))...); err != nil {
		return nil, err
	}
	return out, nil
}
