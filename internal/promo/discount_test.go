package promo

import (
	"errors"
	"testing"

	"storefront/ent"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// The discount of each kind at its boundaries: thresholds over the lines
// in scope only, caps, half-up rounding, never below one minor unit.
func TestDiscount(t *testing.T) {
	m := money.MustParse
	amount := func(off string, min string, goods ...int64) *ent.Coupon {
		return &ent.Coupon{Kind: enums.CouponAmountOff, AmountOff: m(off), MinSubtotal: m(min), GoodsIds: goods}
	}
	percent := func(p int, cap string, goods ...int64) *ent.Coupon {
		c := &ent.Coupon{Kind: enums.CouponPercentOff, PercentOff: p, GoodsIds: goods}
		if cap != "" {
			c.MaxDiscount = m(cap)
		}
		return c
	}
	three := []Line{{GoodsID: 1, Subtotal: m("30.00")}, {GoodsID: 2, Subtotal: m("50.00")}, {GoodsID: 3, Subtotal: m("20.01")}}
	for name, tc := range map[string]struct {
		c     *ent.Coupon
		lines []Line
		want  string
		scope []bool
		err   error
	}{
		"amount":                        {amount("10.00", "0.00"), three, "10.00", []bool{true, true, true}, nil},
		"threshold met exactly":         {amount("10.00", "100.01"), three, "10.00", []bool{true, true, true}, nil},
		"threshold missed by a cent":    {amount("10.00", "100.02"), three, "", nil, ErrCouponNotApplicable},
		"threshold over its scope only": {amount("10.00", "50.01", 1, 3), three, "10.00", []bool{true, false, true}, nil},
		"scope below its threshold":     {amount("10.00", "50.02", 1, 3), three, "", nil, ErrCouponNotApplicable},
		"no line in scope":              {amount("10.00", "0.00", 9), three, "", nil, ErrCouponNotApplicable},
		"amount capped by its scope":    {amount("99.00", "0.00", 3), three, "20.01", []bool{false, false, true}, nil},
		"never below one cent":          {amount("99.00", "0.00"), []Line{{GoodsID: 1, Subtotal: m("5.00")}}, "4.99", []bool{true}, nil},
		"percent half up (x.xx5 → up)":  {percent(15, "", 3), three, "3.00", []bool{false, false, true}, nil},                    // 20.01 × 15% = 3.0015
		"percent half up at .5":         {percent(50, ""), []Line{{GoodsID: 1, Subtotal: m("0.03")}}, "0.02", []bool{true}, nil}, // 0.015 → 0.02
		"percent capped":                {percent(50, "12.34"), three, "12.34", []bool{true, true, true}, nil},
		"percent under its cap":         {percent(10, "12.34"), three, "10.00", []bool{true, true, true}, nil},
		"percent of the two in scope":   {percent(99, "", 1, 2), three, "79.20", []bool{true, true, false}, nil},
		"percent never below one cent":  {percent(99, ""), []Line{{GoodsID: 1, Subtotal: m("0.01")}}, "0.00", []bool{true}, nil},
	} {
		d, scope, err := Discount(tc.c, tc.lines)
		switch {
		case tc.err != nil:
			if !errors.Is(err, tc.err) {
				t.Errorf("%s: %v, want %v", name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", name, err)
		case d != m(tc.want) || len(scope) != len(tc.scope):
			t.Errorf("%s: %s %v, want %s %v", name, d, scope, tc.want, tc.scope)
		default:
			for i := range scope {
				if scope[i] != tc.scope[i] {
					t.Errorf("%s: scope %v, want %v", name, scope, tc.scope)
				}
			}
		}
	}
}
