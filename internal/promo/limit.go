package promo

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"storefront/ent"
	"storefront/ent/purchasecount"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
)

// A goods' purchase limit is the units one customer may hold in orders
// that stand (UNPAID, PAID and later; not CLOSED or REFUNDED). The order's
// transaction adds its units to the customer's Purchases counter after its
// stock (inventory.TakeChecked adds it, in the lock order), and the
// order's close or refund gives them back once (ReleasePurchases), in the
// transaction of its state's CAS.

// ReleasePurchases gives user's units of goods back (the order that counted
// them closed or was refunded). The counter never goes below zero.
func ReleasePurchases(ctx context.Context, tx *ent.Tx, user string, units map[int64]int64) error {
	// Ascending goods: the order every counter write of one holder follows.
	for _, goods := range slices.Sorted(maps.Keys(units)) {
		n := units[goods]
		if _, err := tx.PurchaseCount.Update().Where(purchasecount.GoodsID(goods), purchasecount.UserID(user),
			purchasecount.UnitsGTE(n)).AddUnits(-n).Save(ctx); err != nil {
			return fmt.Errorf("releasing the purchases of goods %d: %w", goods, err)
		}
	}
	return nil
}

// SetPurchases makes goods' purchase counts held (each customer's units in
// orders that stand, as checkout counted them when a limit was set:
// checkout.CountHeld), every other customer's 0, in the transaction of that
// count.
func SetPurchases(ctx context.Context, tx *ent.Tx, goods int64, held map[string]int64) error {
	if _, err := tx.PurchaseCount.Update().Where(purchasecount.GoodsID(goods)).SetUnits(0).Save(ctx); err != nil {
		return fmt.Errorf("setting the purchases of goods %d: %w", goods, err)
	}
	users := slices.Sorted(maps.Keys(held))
	if len(users) == 0 {
		return nil
	}
	c := guard.Counter{Kind: Purchases, Scope: goods, Holders: users, Adds: make([]int64, len(users)), Limit: math.MaxInt64}
	for i, u := range users {
		c.Adds[i] = held[u]
	}
	return guard.AddCounters(ctx, tx, []guard.Counter{c})
}

// Purchase is the counter adding an order's units of a limited goods.
func Purchase(goods int64, user string, units, limit int64) guard.Counter {
	return guard.Add(Purchases, goods, user, units, limit)
}

// Left is what user may still order of goods under its purchase limit,
// with the limit and the goods' name, as read now.
func Left(ctx context.Context, client *ent.Client, goods int64, user string) (left, limit int64, name string, err error) {
	g, err := client.Goods.Get(ctx, goods)
	if err != nil {
		return 0, 0, "", err
	}
	if g.PurchaseLimit == nil {
		return 0, 0, g.Name, fmt.Errorf("goods %d has no purchase limit", goods)
	}
	held, err := client.PurchaseCount.Query().Where(purchasecount.GoodsID(goods), purchasecount.UserID(user)).
		Select(purchasecount.FieldUnits).Int(ctx)
	if ent.IsNotFound(err) {
		held, err = 0, nil
	}
	return max(*g.PurchaseLimit-int64(held), 0), *g.PurchaseLimit, g.Name, err
}

// Holding names one customer's purchase count of one goods.
type Holding struct {
	Goods int64
	User  string
}

// Held reads the units customers hold of goods under their purchase limits
// through q (a plain read: a group-commit batch decides from it, and the
// counter's guard under the lock checks what it decided).
func Held(ctx context.Context, q store.Querier, hs []Holding) (map[Holding]int64, error) {
	out := make(map[Holding]int64, len(hs))
	if len(hs) == 0 {
		return out, nil
	}
	var where strings.Builder
	args := make([]any, 0, 2*len(hs))
	for i, h := range hs {
		if i > 0 {
			where.WriteString(" OR ")
		}
		where.WriteString("(" + purchasecount.FieldGoodsID + " = ? AND " + purchasecount.FieldUserID + " = ?)")
		args = append(args, h.Goods, h.User)
	}
	rs, err := q.QueryContext(ctx, "SELECT "+purchasecount.FieldGoodsID+", "+purchasecount.FieldUserID+", "+purchasecount.FieldUnits+
		" FROM "+purchasecount.Table+" WHERE "+where.String(), args...)
	if err != nil {
		return nil, fmt.Errorf("reading purchase counts: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var h Holding
		var n int64
		if err := rs.Scan(&h.Goods, &h.User, &n); err != nil {
			return nil, err
		}
		out[h] = n
	}
	return out, rs.Err()
}
