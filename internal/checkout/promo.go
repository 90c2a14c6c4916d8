package checkout

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/pricing"
	"storefront/internal/promo"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// An order's coupon and purchase limits (internal/promo): decided when the
// order is priced, made the order's in its transaction, given back once by
// its close. The coupon is a kind of adjustment (couponKind); both paths
// claim it the same way (couponClaims).

// couponKind is the COUPON adjustment: the customer's claimed coupon
// (PlaceInput.UserCouponID), its discount over the lines in its scope.
// Read reads the coupons the orders name at once; the order's transaction
// claims the coupon.
type couponKind struct{ terms *promo.Terms }

func (k couponKind) Read(ctx context.Context, c *ent.Client, ins []*PlaceInput) (Pricer, error) {
	var ids []int64
	for _, in := range ins {
		if in.UserCouponID != nil {
			ids = append(ids, *in.UserCouponID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	owned, err := k.terms.ReadOwned(ctx, c, ids)
	if err != nil {
		return nil, err
	}
	return func(o *Order, in *PlaceInput) (*pricing.Adjustment, error) {
		if in.UserCouponID == nil {
			return nil, nil
		}
		return priceCoupon(o, owned[*in.UserCouponID], *in.UserCouponID)
	}, nil
}

// priceCoupon is o's discount with coupon id as read (nil: no such
// coupon), or why it does not apply.
func priceCoupon(o *Order, owned *promo.Owned, id int64) (*pricing.Adjustment, error) {
	lines := make([]promo.Line, len(o.Lines))
	for i, l := range o.Lines {
		lines[i] = promo.Line{GoodsID: l.GoodsID, Subtotal: l.UnitPrice * money.Money(l.Quantity)}
	}
	a, err := promo.ApplyOwned(owned, o.UserID, id, lines, o.CreatedAt)
	if err != nil {
		return nil, err
	}
	o.UserCouponID = id
	adj := a.Adjustment()
	return &adj, nil
}

// couponClaims is the claim at of the coupons orders use (ascending: the
// order their rows are locked); none when no order uses one. The plain
// path passes its one order, a batch the orders it won.
func couponClaims(at time.Time, orders ...*Order) []guard.RowClaim {
	byID := map[int64]*Order{}
	for _, o := range orders {
		if o.UserCouponID != 0 {
			byID[o.UserCouponID] = o
		}
	}
	if len(byID) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(byID))
	sns := make([]string, len(ids))
	for i, id := range ids {
		sns[i] = byID[id].OrderSn
	}
	return []guard.RowClaim{promo.Lock(ids, sns, at)}
}

// purchaseCounters are the purchase counters the counted lines of orders
// add to: one per limited goods (ascending), each buyer's units in it
// (ascending buyer). The plain path passes its one order, a batch the
// orders it won.
func purchaseCounters(orders ...*Order) []guard.Counter {
	units := map[promo.Holding]int64{}
	limits := map[int64]int64{}
	for _, o := range orders {
		for _, l := range o.Lines {
			if l.counted {
				units[promo.Holding{Goods: l.GoodsID, User: o.UserID}] += l.Quantity
				limits[l.GoodsID] = *l.limit
			}
		}
	}
	holdings := slices.SortedFunc(maps.Keys(units), func(a, b promo.Holding) int {
		return cmp.Or(cmp.Compare(a.Goods, b.Goods), cmp.Compare(a.User, b.User))
	})
	var out []guard.Counter
	for _, h := range holdings {
		if n := len(out); n == 0 || out[n-1].Scope != h.Goods {
			out = append(out, guard.Counter{Kind: promo.Purchases, Scope: h.Goods, Limit: limits[h.Goods]})
		}
		c := &out[len(out)-1]
		c.Holders, c.Adds = append(c.Holders, h.User), append(c.Adds, units[h])
	}
	return out
}

// countedUnits is o's units per goods that went to purchase counters.
func countedUnits(o *Order) map[int64]int64 {
	units := map[int64]int64{}
	for _, l := range o.Lines {
		if l.counted {
			units[l.GoodsID] += l.Quantity
		}
	}
	return units
}

// closePromo is the close's part (closeLocked, after every stock row): a
// cancel or timeout gives the coupon back, every close and refund the
// purchase counts. It runs once per order, for the caller that won the
// order's CAS.
func closePromo(ctx context.Context, tx *ent.Tx, o *Order, t Transition, now time.Time) error {
	if o.UserCouponID != 0 && t.From == enums.OrderUnpaid {
		if err := promo.Release(ctx, tx, o.UserCouponID, o.OrderSn, now); err != nil {
			return err
		}
	}
	return promo.ReleasePurchases(ctx, tx, o.UserID, countedUnits(o))
}

// payPromo is the payment's part (payment p at now): the coupon becomes
// USED. After a close (payAfterClose) the purchase counts it gave back are
// counted again, whatever the limit: the customer has paid. A coupon the
// payment cannot take (another order took it after the close) leaves the
// order flagged (couponTaken): it keeps its discount, which no coupon pays
// for.
func payPromo(ctx context.Context, tx *ent.Tx, o *Order, p Payer, afterClose bool, now time.Time) error {
	if o.UserCouponID != 0 {
		taken, holder, err := promo.Use(ctx, tx, o.UserCouponID, o.OrderSn)
		if err != nil {
			return err
		}
		if !taken {
			if err := couponTaken(ctx, tx, o, p, holder, now); err != nil {
				return err
			}
		}
	}
	if !afterClose {
		return nil
	}
	var again []guard.Counter
	units := countedUnits(o)
	for _, g := range slices.Sorted(maps.Keys(units)) {
		again = append(again, promo.Purchase(g, o.UserID, units[g], math.MaxInt64))
	}
	if err := guard.AddCounters(ctx, tx, again); err != nil {
		return fmt.Errorf("counting the purchases of order %s again: %w", o.OrderSn, err)
	}
	return nil
}

// couponTaken flags o, paid by p with the discount of a coupon that order
// holder holds instead, for a person: needsReview, a WARN line and
// CouponTakenByAnotherOrder. The money paid is what the order asked; what
// to do about the discount (charge it, refund, let it be) is theirs.
func couponTaken(ctx context.Context, tx *ent.Tx, o *Order, p Payer, holder string, now time.Time) error {
	if _, err := tx.Order.Update().Where(order.ID(o.ID)).SetNeedsReview(true).AddVersion(1).Save(ctx); err != nil {
		return fmt.Errorf("flagging order %s: %w", o.OrderSn, err)
	}
	slog.WarnContext(ctx, "paid with the discount of a coupon another order holds: review by hand", "event", EventCouponTakenByAnotherOrder,
		"orderSn", o.OrderSn, "userCouponId", o.UserCouponID, "discount", o.Discount.String(), "heldBy", holder,
		"provider", p.Provider, "paymentId", p.PaymentID)
	return Emit(ctx, tx, EventCouponTakenByAnotherOrder, o.OrderSn, map[string]any{"orderSn": o.OrderSn,
		"userCouponId": strconv.FormatInt(o.UserCouponID, 10), "discount": o.Discount.String(), "heldBy": holder,
		"provider": p.Provider, "paymentId": p.PaymentID}, now)
}

// CountHeld counts what customers already hold of goods when a purchase
// limit is set on it (a catalog edit calls it in its transaction: app.New
// wires catalog.Config.OnPurchaseLimit). Lines placed while it had no limit
// did not count; the limit bounds the units one holds in orders that
// stand, so every standing line of the goods becomes counted and each
// customer's purchase count their standing units (promo.SetPurchases).
// The edit holds the goods' lock exclusively: no order of the goods is
// placed, closed or paid meanwhile, and every one after it reads the limit
// (the goods guard of the plain path and of a batch). On MySQL this must be
// the transaction's first plain read: REPEATABLE READ fixes the snapshot
// there, after that lock.
func CountHeld(ctx context.Context, tx *ent.Tx, goods int64) error {
	rs, err := tx.QueryContext(ctx, `SELECT l.id, o.user_id, l.quantity, CASE WHEN l.purchase_counted = TRUE THEN 1 ELSE 0 END
FROM order_line l JOIN orders o ON o.id = l.order_id WHERE l.goods_id = ? AND o.status NOT IN (?, ?)`,
		goods, string(enums.OrderClosed), string(enums.OrderRefunded))
	if err != nil {
		return fmt.Errorf("reading the standing lines of goods %d: %w", goods, err)
	}
	defer rs.Close()
	held := map[string]int64{}
	var uncounted []any
	for rs.Next() {
		var id, qty, counted int64
		var user string
		if err := rs.Scan(&id, &user, &qty, &counted); err != nil {
			return err
		}
		held[user] += qty
		if counted == 0 {
			uncounted = append(uncounted, id)
		}
	}
	if err := rs.Err(); err != nil {
		return err
	}
	rs.Close()
	for part := range slices.Chunk(uncounted, 500) {
		if _, err := tx.ExecContext(ctx, "UPDATE order_line SET purchase_counted = TRUE WHERE id IN ("+store.Marks(len(part))+")", part...); err != nil {
			return fmt.Errorf("counting the standing lines of goods %d: %w", goods, err)
		}
	}
	return promo.SetPurchases(ctx, tx, goods, held)
}

// purchaseLimitError words a purchase limit the order would pass: the
// goods, its limit, and what the customer may still order of it.
func (s *Service) purchaseLimitError(ctx context.Context, l *guard.CounterLimit) error {
	left, limit, name, err := promo.Left(ctx, s.db.Client, l.Scope, l.Holder)
	if err != nil {
		return fmt.Errorf("%w: goods %d (and reading what is left: %v)", promo.ErrPurchaseLimit, l.Scope, err)
	}
	return fmt.Errorf("%w: %s (goods %d) allows %d per customer in orders that stand; %d more can be ordered, not %d",
		promo.ErrPurchaseLimit, name, l.Scope, limit, left, l.Add)
}
