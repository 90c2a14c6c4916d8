package promo

import (
	"fmt"
	"math/big"
	"slices"

	"storefront/ent"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Line is what a coupon needs of an order's line: its goods and subtotal.
type Line struct {
	GoodsID  int64
	Subtotal money.Money
}

// Discount is what coupon c takes off lines: the amount, and which lines
// are in its scope (they share it, in proportion to their subtotals:
// internal/pricing). AMOUNT_OFF takes amountOff, at most the in-scope
// subtotal; PERCENT_OFF that percent of it, rounded half up to the minor
// unit and capped by maxDiscount. The order never costs less than one minor
// unit. An error says why the coupon does not apply (ErrCouponNotApplicable).
func Discount(c *ent.Coupon, lines []Line) (money.Money, []bool, error) {
	scope := make([]bool, len(lines))
	var inScope, total money.Money
	for i, l := range lines {
		total += l.Subtotal
		if len(c.GoodsIds) == 0 || slices.Contains(c.GoodsIds, l.GoodsID) {
			scope[i] = true
			inScope += l.Subtotal
		}
	}
	switch {
	case inScope == 0:
		return 0, nil, fmt.Errorf("%w: no line of the order is in coupon %d's scope", ErrCouponNotApplicable, c.ID)
	case inScope < c.MinSubtotal:
		return 0, nil, fmt.Errorf("%w: coupon %d needs %s of its goods, the order has %s", ErrCouponNotApplicable, c.ID, c.MinSubtotal, inScope)
	}
	var d money.Money
	switch c.Kind {
	case enums.CouponAmountOff:
		d = c.AmountOff
	case enums.CouponPercentOff:
		// Half up: (x·p + 50) / 100, in big integers: x·p may pass int64.
		n := new(big.Int).Mul(big.NewInt(int64(inScope)), big.NewInt(int64(c.PercentOff)))
		d = money.Money(n.Add(n, big.NewInt(50)).Quo(n, big.NewInt(100)).Int64())
		if c.MaxDiscount > 0 {
			d = min(d, c.MaxDiscount)
		}
	}
	d = min(d, inScope, total-1)
	return max(d, 0), scope, nil
}
