// Package pricing turns priced lines and a list of adjustments into an
// order's money (API-CONVENTIONS.md, "Order money"): subtotal + Σ
// adjustments = amount, each adjustment split over the lines it applies to
// in shares that sum to it exactly. The cart, the plain path and the
// group-commit batch all price through Quote, once, so what a cart shows
// is what an order charges.
package pricing

import (
	"fmt"
	"math"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Line is one line to price: a unit price read from the database, never
// from the client, and a quantity.
type Line struct {
	UnitPrice money.Money
	Quantity  int64
}

// Adjustment is one change of an order's amount besides its lines: a
// discount (Amount < 0: a coupon, a promotion, points…) or a fee (> 0: the
// shipping fee). Kinds are defined in checkout; to pricing they differ only
// in sign.
type Adjustment struct {
	Kind     enums.AdjustmentKind
	SourceID int64 // what gave it (the customer's coupon); 0: none
	Label    string
	Amount   money.Money
	// Scope[i] says line i takes a share (a coupon of some goods only);
	// nil: every line. Quote apportions Amount over the lines in scope
	// unless Shares is given.
	Scope []bool
	// Shares are the per-line parts of Amount, in the lines' order, summing
	// to it exactly (set by Quote, or given by a kind that knows them).
	Shares []money.Money
}

// Quoted is an order's money: Subtotal + Σ Adjustments[].Amount = Amount.
type Quoted struct {
	Subtotal      money.Money
	Amount        money.Money
	LineSubtotals []money.Money
	Adjustments   []Adjustment // with their Shares
}

// Discount is what the discounts take off: − Σ of the negative adjustments.
func (q *Quoted) Discount() money.Money {
	var d money.Money
	for _, a := range q.Adjustments {
		if a.Amount < 0 {
			d -= a.Amount
		}
	}
	return d
}

// Fees is Σ of the positive adjustments (the shipping fee).
func (q *Quoted) Fees() money.Money {
	var f money.Money
	for _, a := range q.Adjustments {
		if a.Amount > 0 {
			f += a.Amount
		}
	}
	return f
}

// LineDiscount is line i's share of every discount, as a positive amount.
func (q *Quoted) LineDiscount(i int) money.Money {
	var d money.Money
	for _, a := range q.Adjustments {
		if a.Amount < 0 {
			d -= a.Shares[i]
		}
	}
	return d
}

// ErrTooLarge refuses an order whose money does not fit the amounts the
// database stores.
var ErrTooLarge = errs.New(errs.InvalidInput, "amount too large")

// Quote prices lines with adjs, in their order. Each discount is split over
// what its lines still cost after the discounts before it, so no line ever
// goes below zero; each fee over its lines' subtotals. A negative price or
// quantity, a discount above what its lines still cost, a scope or shares
// of the wrong length, shares that do not sum to their adjustment, or an
// amount past int64 is refused: callers validated their input, so each of
// these is a bug or an attack.
func Quote(lines []Line, adjs []Adjustment) (Quoted, error) {
	q := Quoted{LineSubtotals: make([]money.Money, len(lines))}
	for i, l := range lines {
		if l.UnitPrice < 0 || l.Quantity < 0 {
			return Quoted{}, fmt.Errorf("%w: line %d: price %s × %d", errs.InvalidInput, i+1, l.UnitPrice, l.Quantity)
		}
		if l.Quantity != 0 && int64(l.UnitPrice) > math.MaxInt64/l.Quantity {
			return Quoted{}, fmt.Errorf("%w: line %d: %s × %d", ErrTooLarge, i+1, l.UnitPrice, l.Quantity)
		}
		sub := l.UnitPrice * money.Money(l.Quantity)
		if q.Subtotal > math.MaxInt64-sub {
			return Quoted{}, fmt.Errorf("%w: subtotal past line %d", ErrTooLarge, i+1)
		}
		q.LineSubtotals[i] = sub
		q.Subtotal += sub
	}
	left := append([]money.Money(nil), q.LineSubtotals...) // what each line still costs
	q.Amount = q.Subtotal
	q.Adjustments = make([]Adjustment, len(adjs))
	for k, a := range adjs {
		if err := share(&a, len(lines), left, q.LineSubtotals); err != nil {
			return Quoted{}, fmt.Errorf("adjustment %d (%s): %w", k+1, a.Kind, err)
		}
		for i, s := range a.Shares {
			if s > 0 && (left[i] > math.MaxInt64-s || q.Amount > math.MaxInt64-s) {
				return Quoted{}, fmt.Errorf("%w: adjustment %d (%s)", ErrTooLarge, k+1, a.Kind)
			}
			if left[i]+s < 0 {
				return Quoted{}, fmt.Errorf("%w: adjustment %d (%s) takes %s off line %d, which costs %s", errs.InvalidInput, k+1, a.Kind, -s, i+1, left[i])
			}
			left[i] += s
			q.Amount += s
		}
		a.Scope = nil
		q.Adjustments[k] = a
	}
	return q, nil
}

// share sets a.Shares (when not given): a discount over what the lines in
// scope still cost, a fee over their subtotals.
func share(a *Adjustment, n int, left, subs []money.Money) error {
	if a.Shares != nil {
		if len(a.Shares) != n {
			return fmt.Errorf("%w: %d shares for %d lines", errs.InvalidInput, len(a.Shares), n)
		}
		var sum money.Money
		for _, s := range a.Shares {
			sum += s
		}
		if sum != a.Amount {
			return fmt.Errorf("%w: shares sum to %s, not %s", errs.InvalidInput, sum, a.Amount)
		}
		return nil
	}
	if a.Scope != nil && len(a.Scope) != n {
		return fmt.Errorf("%w: a scope of %d lines for %d", errs.InvalidInput, len(a.Scope), n)
	}
	from := subs
	if a.Amount < 0 {
		from = left
	}
	base := make([]money.Money, n)
	var sum money.Money
	for i := range base {
		if a.Scope == nil || a.Scope[i] {
			base[i] = from[i]
			sum += base[i]
		}
	}
	total := a.Amount
	if total < 0 {
		total = -total
		if total > sum {
			return fmt.Errorf("%w: a discount of %s above the %s its lines still cost", errs.InvalidInput, total, sum)
		}
	}
	a.Shares = make([]money.Money, n)
	if sum == 0 && total > 0 {
		// A fee on lines that cost nothing (free gifts): it is the first
		// line's in scope, so the shares still sum to it.
		for i := range base {
			if a.Scope == nil || a.Scope[i] {
				a.Shares[i] = a.Amount
				return nil
			}
		}
		return fmt.Errorf("%w: a fee of %s on no line", errs.InvalidInput, a.Amount)
	}
	apportion(total, base, a.Shares)
	if a.Amount < 0 {
		for i := range a.Shares {
			a.Shares[i] = -a.Shares[i]
		}
	}
	return nil
}
