package pricing

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

func coupon(amount money.Money, scope ...bool) Adjustment {
	a := Adjustment{Kind: enums.AdjustCoupon, Amount: -amount}
	if len(scope) > 0 {
		a.Scope = scope
	}
	return a
}

func shipping(fee money.Money) Adjustment {
	return Adjustment{Kind: enums.AdjustShipping, Amount: fee}
}

func TestQuoteSumsTheLines(t *testing.T) {
	q, err := Quote([]Line{{UnitPrice: 9900, Quantity: 2}, {UnitPrice: 1, Quantity: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Subtotal != 19803 || q.Amount != 19803 || q.Discount() != 0 || q.LineSubtotals[0] != 19800 || q.LineSubtotals[1] != 3 {
		t.Fatalf("got %+v", q)
	}
}

func TestQuoteAppliesAdjustments(t *testing.T) {
	q, err := Quote([]Line{{UnitPrice: 1000, Quantity: 1}, {UnitPrice: 2000, Quantity: 1}}, []Adjustment{coupon(100), shipping(800)})
	if err != nil {
		t.Fatal(err)
	}
	if q.Amount != 3000-100+800 || q.Discount() != 100 || q.Fees() != 800 {
		t.Fatalf("amount %s discount %s fees %s, want 37.00, 1.00, 8.00", q.Amount, q.Discount(), q.Fees())
	}
	// 100 over 1000:2000 is 33.3 : 66.7, the left-over unit to the larger remainder.
	if s := q.Adjustments[0].Shares; s[0] != -33 || s[1] != -67 || q.LineDiscount(0) != 33 || q.LineDiscount(1) != 67 {
		t.Fatalf("coupon shares %v, want [-33 -67]", s)
	}
	if s := q.Adjustments[1].Shares; s[0]+s[1] != 800 || s[0] != 267 {
		t.Fatalf("shipping shares %v, want [267 533]", s)
	}
}

// A second discount is split over what the lines still cost after the
// first: a line the first took whole takes nothing of the second.
func TestQuoteStacksDiscounts(t *testing.T) {
	lines := []Line{{UnitPrice: 1000, Quantity: 1}, {UnitPrice: 1000, Quantity: 1}}
	q, err := Quote(lines, []Adjustment{coupon(1000, true, false), {Kind: enums.AdjustPoints, Amount: -500}})
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Adjustments[1].Shares; s[0] != 0 || s[1] != -500 || q.Amount != 500 {
		t.Fatalf("second discount's shares %v, amount %s; want [0 -500], 5.00", s, q.Amount)
	}
	if _, err := Quote(lines, []Adjustment{coupon(1500), coupon(501)}); !errors.Is(err, errs.InvalidInput) {
		t.Fatalf("discounts above the subtotal: %v, want INVALID_INPUT", err)
	}
}

// The shares always sum to each adjustment exactly and never take a line
// below zero, whatever the lines and however many discounts.
func TestApportionIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := 1 + r.IntN(8)
		lines := make([]Line, n)
		for i := range lines {
			lines[i] = Line{UnitPrice: money.Money(r.Int64N(1_000_000_00)), Quantity: 1 + r.Int64N(999)}
		}
		sub, err := Quote(lines, nil)
		if err != nil {
			t.Fatal(err)
		}
		var adjs []Adjustment
		left := sub.Subtotal
		for range 1 + r.IntN(3) {
			d := money.Money(0)
			if left > 0 {
				d = money.Money(r.Int64N(int64(left) + 1))
			}
			left -= d
			adjs = append(adjs, coupon(d))
		}
		adjs = append(adjs, shipping(money.Money(r.Int64N(10000))))
		q, err := Quote(lines, adjs)
		if err != nil {
			t.Fatal(err)
		}
		cost := append([]money.Money(nil), q.LineSubtotals...)
		total := q.Subtotal
		for k, a := range q.Adjustments {
			var sum money.Money
			for i, s := range a.Shares {
				cost[i] += s
				if cost[i] < 0 {
					t.Fatalf("line %d below zero after adjustment %d (lines %v, adjustments %v)", i, k, lines, adjs)
				}
				sum += s
			}
			if sum != a.Amount {
				t.Fatalf("adjustment %d: shares sum to %s, want %s (lines %v)", k, sum, a.Amount, lines)
			}
			total += a.Amount
		}
		if total != q.Amount {
			t.Fatalf("subtotal + adjustments = %s, amount %s", total, q.Amount)
		}
	}
}

func TestQuoteRefuses(t *testing.T) {
	five := []Line{{UnitPrice: 5, Quantity: 1}}
	for name, tc := range map[string]struct {
		lines []Line
		adjs  []Adjustment
		want  error
	}{
		"negative price":          {[]Line{{UnitPrice: -1, Quantity: 1}}, nil, errs.InvalidInput},
		"negative quantity":       {[]Line{{UnitPrice: 1, Quantity: -1}}, nil, errs.InvalidInput},
		"line past int64":         {[]Line{{UnitPrice: math.MaxInt64 / 2, Quantity: 3}}, nil, ErrTooLarge},
		"subtotal past int64":     {[]Line{{UnitPrice: math.MaxInt64 / 2, Quantity: 1}, {UnitPrice: math.MaxInt64 / 2, Quantity: 1}, {UnitPrice: 2, Quantity: 1}}, nil, ErrTooLarge},
		"discount above subtotal": {five, []Adjustment{coupon(6)}, errs.InvalidInput},
		"shipping past int64":     {[]Line{{UnitPrice: math.MaxInt64 - 1, Quantity: 1}}, []Adjustment{shipping(2)}, ErrTooLarge},
		"scope of the wrong size": {five, []Adjustment{coupon(1, true, true)}, errs.InvalidInput},
		"shares not summing":      {five, []Adjustment{{Kind: enums.AdjustPoints, Amount: -2, Shares: []money.Money{-1}}}, errs.InvalidInput},
		"shares below a line":     {five, []Adjustment{{Kind: enums.AdjustPoints, Amount: -6, Shares: []money.Money{-6}}}, errs.InvalidInput},
	} {
		if _, err := Quote(tc.lines, tc.adjs); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// A discount of some lines only is shared by those lines alone, in
// proportion to their subtotals, and never exceeds their subtotal.
func TestQuoteScopesTheDiscount(t *testing.T) {
	lines := []Line{{UnitPrice: 1000, Quantity: 1}, {UnitPrice: 5000, Quantity: 1}, {UnitPrice: 2000, Quantity: 1}}
	q, err := Quote(lines, []Adjustment{coupon(100, true, false, true)})
	if err != nil {
		t.Fatal(err)
	}
	if s := q.Adjustments[0].Shares; s[0] != -33 || s[1] != 0 || s[2] != -67 || q.Amount != 7900 {
		t.Fatalf("shares %v amount %s, want [-33 0 -67] and 79.00", s, q.Amount)
	}
	if _, err := Quote(lines, []Adjustment{coupon(3001, true, false, true)}); !errors.Is(err, errs.InvalidInput) {
		t.Fatalf("a discount above its lines' 30.00: %v, want INVALID_INPUT", err)
	}
}
