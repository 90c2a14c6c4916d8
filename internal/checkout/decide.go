package checkout

import (
	"fmt"
	"maps"
	"time"

	"storefront/ent"
	"storefront/internal/inventory"
	"storefront/internal/promo"
)

// The group-commit batch's decision, apart from any database: given what
// the batch read (SKU rows, stock, the idempotency records found), which
// orders go through and what every other order is answered. The plain path
// decides an existing key the same way (keyStateOf).

// decide settles every order of batch from what was read: a key already
// recorded answers as the plain path's claim would, an order that cannot be
// built (unknown or unavailable SKU or pool, quantity) is refused, and the
// rest are allocated in arrival order. It returns the orders to write.
func (s *Service) decide(batch []*ticket, d decision, keys map[[2]string]*ent.Idempotency, out []verdict, now time.Time) []int {
	var cand []int
	for i, t := range batch {
		if r := keys[[2]string{t.in.UserID, t.key}]; r != nil {
			out[i] = keyVerdict(r, t.hash, now)
			continue
		}
		lines, err := s.buildFrom(t.in.Items, d.rows, d.pools.pools, nil)
		if err != nil {
			out[i] = verdict{err: err}
			continue
		}
		t.line, t.order = lines[0], s.newOrder(t.in, lines)
		if err := price(t.order, &t.in, d.pricers); err != nil {
			out[i] = verdict{err: err}
			continue
		}
		cand = append(cand, i)
	}
	return allocate(batch, d.stock, d.pools, d.held, out, cand)
}

// poolState is what a batch read of the stock pools its orders name: the
// pools, and the units each buyer already holds of them.
type poolState struct {
	pools map[int64]*ent.StockPool
	units map[inventory.PoolBuyer]int64
}

// keyState is what an idempotency record already in the database means for
// a request with the same (user, key).
type keyState int

const (
	keyInProgress keyState = iota // another request holds it
	keyTakeOver                   // finished past its retention, or abandoned: claim it anew
	keyReused                     // it came with another input
	keyReplay                     // finished with an order: answer that order
)

// keyStateOf decides what record r means for a request whose input hashes
// to hash, at now: the one rule of the plain path's claim and the batch.
func keyStateOf(r *ent.Idempotency, hash string, now time.Time) keyState {
	pending := r.State == statePending
	switch {
	case (!pending && r.ExpiresAt.Before(now)) || (pending && r.LeaseUntil.Before(now)):
		return keyTakeOver
	case r.RequestHash != hash:
		return keyReused
	case r.State == stateDone && r.OrderSn != nil:
		return keyReplay
	}
	return keyInProgress
}

// keyVerdict answers an order of a batch whose key is already in the
// database.
func keyVerdict(r *ent.Idempotency, hash string, now time.Time) verdict {
	switch keyStateOf(r, hash, now) {
	case keyTakeOver:
		return verdict{alone: true} // taking a key over is the plain path's claim
	case keyReused:
		return verdict{err: ErrIdempotencyKeyReused}
	case keyReplay:
		return verdict{replay: *r.OrderSn}
	}
	return verdict{err: ErrIdempotencyInProgress}
}

// allocate walks the orders idx of batch in arrival order and gives each all
// of its quantity or nothing, as one CAS per order would: a refused order gets
// OUT_OF_STOCK (or, from a pool, POOL_LIMIT_EXCEEDED when its buyer would
// pass the pool's limit) and does not stop later, smaller ones of its source.
func allocate(batch []*ticket, stock map[int64]int64, ps poolState, held map[promo.Holding]int64, out []verdict, idx []int) []int {
	left := make(map[source]int64)
	bought := maps.Clone(held) // each buyer's units of a limited goods, the batch's earlier orders counted
	if bought == nil {
		bought = map[promo.Holding]int64{}
	}
	coupons := map[int64]bool{} // the customers' coupons the batch's earlier orders took
	units := make(map[inventory.PoolBuyer]int64, len(ps.units))
	maps.Copy(units, ps.units) // nil: buyers unread, taken as holding nothing
	var fit []int
	for _, i := range idx {
		t, l := batch[i], batch[i].line
		src := t.source()
		avail, seen := left[src]
		if !seen && src.pool == 0 {
			avail = stock[src.item]
		} else if !seen {
			avail = inventory.Available(ps.pools[src.pool])
		}
		buyer := t.buyer()
		limit, h := l.limit, promo.Holding{Goods: l.GoodsID, User: t.in.UserID}
		switch {
		case l.Quantity > avail:
			out[i] = verdict{err: outOfStock(l)}
		case src.pool != 0 && units[buyer]+l.Quantity > l.poolLimit:
			out[i] = verdict{err: inventory.LimitExceeded(src.pool, l.Quantity)}
		case limit != nil && bought[h]+l.Quantity > *limit:
			out[i] = verdict{err: fmt.Errorf("%w: %s (goods %d) allows %d per customer in orders that stand; %d more can be ordered, not %d",
				promo.ErrPurchaseLimit, l.GoodsName, l.GoodsID, *limit, max(*limit-bought[h], 0), l.Quantity)}
		case t.order.UserCouponID != 0 && coupons[t.order.UserCouponID]:
			out[i] = verdict{err: fmt.Errorf("%w: user coupon %d is locked by an earlier order", promo.ErrCouponNotApplicable, t.order.UserCouponID)}
		default:
			left[src] = avail - l.Quantity
			if id := t.order.UserCouponID; id != 0 {
				coupons[id] = true
			}
			if src.pool != 0 {
				units[buyer] += l.Quantity
			}
			if limit != nil {
				bought[h] += l.Quantity
			}
			fit = append(fit, i)
			out[i] = verdict{}
		}
	}
	return fit
}

// ofSource returns the orders idx of batch that take from src, in order.
func ofSource(batch []*ticket, idx []int, src source) []int {
	var of []int
	for _, i := range idx {
		if batch[i].source() == src {
			of = append(of, i)
		}
	}
	return of
}

// buyersOf returns the buyers of the orders of, in order.
func buyersOf(batch []*ticket, of []int) []string {
	b := make([]string, len(of))
	for j, i := range of {
		b[j] = batch[i].in.UserID
	}
	return b
}

// left is the main stock the orders won of batch leave of each SKU.
func left(batch []*ticket, won []int, stock map[int64]int64) map[int64]int64 {
	l := maps.Clone(stock)
	for _, i := range won {
		if batch[i].pool == 0 {
			l[batch[i].item] -= batch[i].line.Quantity
		}
	}
	return l
}
