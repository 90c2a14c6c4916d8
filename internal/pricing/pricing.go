// Package pricing turns priced lines into an order's money: subtotal,
// adjustments, amount (API-CONVENTIONS.md, "Order money"). The cart and
// checkout both price through Price, so that what a cart shows is what an
// order charges.
package pricing

import (
	"fmt"
	"math"

	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Line is one line to price: a unit price read from the database, never
// from the client, and a quantity.
type Line struct {
	UnitPrice money.Money
	Quantity  int64
}

// Adjustments are what changes an order's amount besides its lines: a
// coupon's Discount, the freight templates' ShippingFee.
type Adjustments struct {
	Discount money.Money // off the subtotal, apportioned to the lines in scope
	// Scope[i] says line i takes a share of Discount (a coupon of some
	// goods only); nil: every line.
	Scope       []bool
	ShippingFee money.Money
}

// inScope reports whether line i shares the discount.
func (a *Adjustments) inScope(i int) bool { return a.Scope == nil || a.Scope[i] }

// Quote is an order's money: Subtotal − Discount + ShippingFee = Amount,
// and LineDiscounts (one per line, in the lines' order) sum to Discount
// exactly.
type Quote struct {
	Subtotal      money.Money
	Discount      money.Money
	ShippingFee   money.Money
	Amount        money.Money
	LineSubtotals []money.Money
	LineDiscounts []money.Money
}

// ErrTooLarge refuses an order whose money does not fit the amounts the
// database stores.
var ErrTooLarge = errs.New(errs.InvalidInput, "amount too large")

// Price prices lines with adj. A negative price, quantity or adjustment, a
// discount above the subtotal or an amount past int64 is refused: the
// caller validated its input, so each of these is a bug or an attack.
func Price(lines []Line, adj Adjustments) (Quote, error) {
	q := Quote{LineSubtotals: make([]money.Money, len(lines)), LineDiscounts: make([]money.Money, len(lines))}
	for i, l := range lines {
		if l.UnitPrice < 0 || l.Quantity < 0 {
			return Quote{}, fmt.Errorf("%w: line %d: price %s × %d", errs.InvalidInput, i+1, l.UnitPrice, l.Quantity)
		}
		if l.Quantity != 0 && int64(l.UnitPrice) > math.MaxInt64/l.Quantity {
			return Quote{}, fmt.Errorf("%w: line %d: %s × %d", ErrTooLarge, i+1, l.UnitPrice, l.Quantity)
		}
		sub := l.UnitPrice * money.Money(l.Quantity)
		if q.Subtotal > math.MaxInt64-sub {
			return Quote{}, fmt.Errorf("%w: subtotal past line %d", ErrTooLarge, i+1)
		}
		q.LineSubtotals[i] = sub
		q.Subtotal += sub
	}
	switch {
	case adj.Discount < 0 || adj.ShippingFee < 0:
		return Quote{}, fmt.Errorf("%w: negative adjustment (discount %s, shipping %s)", errs.InvalidInput, adj.Discount, adj.ShippingFee)
	case adj.Scope != nil && len(adj.Scope) != len(lines):
		return Quote{}, fmt.Errorf("%w: a discount scope of %d lines for %d", errs.InvalidInput, len(adj.Scope), len(lines))
	case adj.Discount > q.scoped(&adj):
		return Quote{}, fmt.Errorf("%w: discount %s above the subtotal %s of its lines", errs.InvalidInput, adj.Discount, q.scoped(&adj))
	case q.Subtotal-adj.Discount > math.MaxInt64-adj.ShippingFee:
		return Quote{}, fmt.Errorf("%w: subtotal %s plus shipping %s", ErrTooLarge, q.Subtotal, adj.ShippingFee)
	}
	q.Discount, q.ShippingFee = adj.Discount, adj.ShippingFee
	q.Amount = q.Subtotal - q.Discount + q.ShippingFee
	base := q.LineSubtotals
	if adj.Scope != nil {
		base = make([]money.Money, len(lines))
		for i := range lines {
			if adj.inScope(i) {
				base[i] = q.LineSubtotals[i]
			}
		}
	}
	apportion(q.Discount, base, q.LineDiscounts)
	return q, nil
}

// scoped is the subtotal of the lines in adj's scope.
func (q *Quote) scoped(adj *Adjustments) money.Money {
	var sum money.Money
	for i, s := range q.LineSubtotals {
		if adj.inScope(i) {
			sum += s
		}
	}
	return sum
}
