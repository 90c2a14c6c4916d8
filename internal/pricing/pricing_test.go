package pricing

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

func TestPriceSumsTheLines(t *testing.T) {
	q, err := Price([]Line{{UnitPrice: 9900, Quantity: 2}, {UnitPrice: 1, Quantity: 3}}, Adjustments{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Subtotal != 19803 || q.Amount != 19803 || q.Discount != 0 || q.LineSubtotals[0] != 19800 || q.LineSubtotals[1] != 3 {
		t.Fatalf("got %+v", q)
	}
}

func TestPriceAppliesAdjustments(t *testing.T) {
	q, err := Price([]Line{{UnitPrice: 1000, Quantity: 1}, {UnitPrice: 2000, Quantity: 1}}, Adjustments{Discount: 100, ShippingFee: 800})
	if err != nil {
		t.Fatal(err)
	}
	if q.Amount != 3000-100+800 {
		t.Fatalf("amount %s, want 37.00", q.Amount)
	}
	// 100 over 1000:2000 is 33.3 : 66.7, the left-over unit to the larger remainder.
	if q.LineDiscounts[0] != 33 || q.LineDiscounts[1] != 67 {
		t.Fatalf("line discounts %v, want [33 67]", q.LineDiscounts)
	}
}

// The shares always sum to the discount exactly and never exceed a line's
// subtotal, whatever the lines.
func TestApportionIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := 1 + r.IntN(8)
		lines := make([]Line, n)
		for i := range lines {
			lines[i] = Line{UnitPrice: money.Money(r.Int64N(1_000_000_00)), Quantity: 1 + r.Int64N(999)}
		}
		sub, err := Price(lines, Adjustments{})
		if err != nil {
			t.Fatal(err)
		}
		d := money.Money(0)
		if sub.Subtotal > 0 {
			d = money.Money(r.Int64N(int64(sub.Subtotal) + 1))
		}
		q, err := Price(lines, Adjustments{Discount: d})
		if err != nil {
			t.Fatal(err)
		}
		var sum money.Money
		for i, s := range q.LineDiscounts {
			if s < 0 || s > q.LineSubtotals[i] {
				t.Fatalf("line %d share %s of subtotal %s (lines %v, discount %s)", i, s, q.LineSubtotals[i], lines, d)
			}
			sum += s
		}
		if sum != d {
			t.Fatalf("shares sum to %s, want %s (lines %v)", sum, d, lines)
		}
	}
}

func TestPriceRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		lines []Line
		adj   Adjustments
		want  error
	}{
		"negative price":          {[]Line{{UnitPrice: -1, Quantity: 1}}, Adjustments{}, errs.InvalidInput},
		"negative quantity":       {[]Line{{UnitPrice: 1, Quantity: -1}}, Adjustments{}, errs.InvalidInput},
		"line past int64":         {[]Line{{UnitPrice: math.MaxInt64 / 2, Quantity: 3}}, Adjustments{}, ErrTooLarge},
		"subtotal past int64":     {[]Line{{UnitPrice: math.MaxInt64 / 2, Quantity: 1}, {UnitPrice: math.MaxInt64 / 2, Quantity: 1}, {UnitPrice: 2, Quantity: 1}}, Adjustments{}, ErrTooLarge},
		"discount above subtotal": {[]Line{{UnitPrice: 5, Quantity: 1}}, Adjustments{Discount: 6}, errs.InvalidInput},
		"negative shipping":       {[]Line{{UnitPrice: 5, Quantity: 1}}, Adjustments{ShippingFee: -1}, errs.InvalidInput},
		"shipping past int64":     {[]Line{{UnitPrice: math.MaxInt64 - 1, Quantity: 1}}, Adjustments{ShippingFee: 2}, ErrTooLarge},
	} {
		if _, err := Price(tc.lines, tc.adj); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}

// A discount of some lines only is shared by those lines alone, in
// proportion to their subtotals, and never exceeds their subtotal.
func TestPriceScopesTheDiscount(t *testing.T) {
	lines := []Line{{UnitPrice: 1000, Quantity: 1}, {UnitPrice: 5000, Quantity: 1}, {UnitPrice: 2000, Quantity: 1}}
	q, err := Price(lines, Adjustments{Discount: 100, Scope: []bool{true, false, true}})
	if err != nil {
		t.Fatal(err)
	}
	if q.LineDiscounts[0] != 33 || q.LineDiscounts[1] != 0 || q.LineDiscounts[2] != 67 || q.Amount != 7900 {
		t.Fatalf("shares %v amount %s, want [33 0 67] and 79.00", q.LineDiscounts, q.Amount)
	}
	if _, err := Price(lines, Adjustments{Discount: 3001, Scope: []bool{true, false, true}}); !errors.Is(err, errs.InvalidInput) {
		t.Fatalf("a discount above its lines' 30.00: %v, want INVALID_INPUT", err)
	}
}
