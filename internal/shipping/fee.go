package shipping

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Line is one line of an order as the fee sees it.
type Line struct {
	GoodsID    int64
	GoodsName  string
	TemplateID int64 // 0: the goods ships free
	Quantity   int64
	// WeightGrams is one unit's weight (a WEIGHT template counts
	// Quantity × WeightGrams).
	WeightGrams int64
	Subtotal    money.Money // the line at its unit price, for freeOver
}

// Fee is what shipping lines to region costs (LikeShop's rule): per
// template, the units of its lines (pieces, or grams for WEIGHT) are
// charged by the most specific rule that covers region, FirstFee plus
// ⌈max(0, units − FirstUnits) / NextUnits⌉ × NextFee, or nothing when the
// subtotal of those lines reaches the template's FreeOver; the fee is the
// sum over the templates. Lines without a template cost nothing. A
// template with no rule for region (or one missing from templates) is
// ErrUnavailable naming its goods and the region.
//
// It is pure: the same lines in any order give the same fee, and nothing
// is read.
func Fee(region string, lines []Line, templates map[int64]*Template) (money.Money, error) {
	type group struct {
		units, pieces int64
		subtotal      money.Money
		goods         []string
	}
	groups := map[int64]*group{}
	for _, l := range lines {
		if l.TemplateID == 0 {
			continue
		}
		g := groups[l.TemplateID]
		if g == nil {
			g = &group{}
			groups[l.TemplateID] = g
		}
		if l.Quantity < 0 || l.WeightGrams < 0 || l.Subtotal < 0 {
			return 0, fmt.Errorf("%w: goods %d: a negative quantity, weight or subtotal", errs.InvalidInput, l.GoodsID)
		}
		w, ok := mul(l.Quantity, l.WeightGrams)
		if !ok || g.units > math.MaxInt64-w || g.pieces > math.MaxInt64-l.Quantity || g.subtotal > math.MaxInt64-l.Subtotal {
			return 0, fmt.Errorf("%w: goods %d: too many units to ship", errs.InvalidInput, l.GoodsID)
		}
		g.units += w
		g.pieces += l.Quantity
		g.subtotal += l.Subtotal
		if !slices.Contains(g.goods, l.GoodsName) {
			g.goods = append(g.goods, l.GoodsName)
		}
	}
	ids := make([]int64, 0, len(groups))
	for id := range groups {
		ids = append(ids, id)
	}
	slices.Sort(ids) // a refusal names the same template whatever the lines' order
	var fee money.Money
	for _, id := range ids {
		g := groups[id]
		t := templates[id]
		var r *Rule
		if t != nil {
			r = t.RuleFor(region)
		}
		if r == nil {
			slices.Sort(g.goods)
			return 0, fmt.Errorf("%w: %s cannot be shipped to region %s", ErrUnavailable, strings.Join(g.goods, ", "), region)
		}
		if t.FreeOver != nil && g.subtotal >= *t.FreeOver {
			continue
		}
		units := g.pieces
		if t.ChargeBy == enums.ChargeByWeight {
			units = g.units
		}
		f, ok := r.charge(units)
		if !ok || fee > math.MaxInt64-f {
			return 0, fmt.Errorf("%w: the shipping fee of template %d does not fit", errs.InvalidInput, id)
		}
		fee += f
	}
	return fee, nil
}

// charge is the rule's fee for units.
func (r *Rule) charge(units int64) (money.Money, bool) {
	fee := r.FirstFee
	if over := units - r.FirstUnits; over > 0 {
		steps := over / r.NextUnits
		if over%r.NextUnits != 0 {
			steps++
		}
		more, ok := mul(steps, int64(r.NextFee))
		if !ok || int64(fee) > math.MaxInt64-more {
			return 0, false
		}
		fee += money.Money(more)
	}
	return fee, true
}

// RuleFor is the rule of t that covers region most specifically (its
// district, then its city, then its province, then "*"), or nil.
func (t *Template) RuleFor(region string) *Rule {
	best, rank := -1, -1
	for i := range t.Rules {
		for _, c := range t.Rules[i].RegionCodes {
			if k := matchRank(c, region); k > rank {
				best, rank = i, k
			}
		}
	}
	if best < 0 {
		return nil
	}
	return &t.Rules[best]
}

// matchRank is how specifically code covers region: 3 the district itself,
// 2 its city, 1 its province, 0 everywhere; -1 not at all.
func matchRank(code, region string) int {
	switch {
	case code == "*":
		return 0
	case len(code) > len(region) || len(region) != 6 || !strings.HasPrefix(region, code):
		return -1
	}
	return len(code) / 2
}

// mul is a × b, and whether it fits an int64 (a, b ≥ 0).
func mul(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	if a > math.MaxInt64/b {
		return 0, false
	}
	return a * b, true
}
