package pricing

import (
	"testing"

	"storefront/internal/vocab/money"
)

func TestRefundable(t *testing.T) {
	for _, tc := range []struct {
		paid              money.Money
		quantity, held, k int64
		heldAmount        money.Money
		want              money.Money
	}{
		{29700, 3, 0, 3, 0, 29700},    // the whole line
		{29700, 3, 0, 1, 0, 9900},     // one of three, even
		{28700, 3, 0, 1, 0, 9566},     // one of three after a 10.00 discount: rounded down
		{28700, 3, 1, 1, 9566, 9566},  // the second
		{28700, 3, 2, 1, 19132, 9568}, // the last unit takes the remainder: 9566+9566+9568 = 28700
		{28700, 3, 0, 2, 0, 19133},    // two at once, rounded down
		{28700, 3, 2, 1, 19133, 9567}, // then the last: 19133+9567 = 28700
		{28700, 3, 1, 1, 9566, 9566},  // a request given back: held counts only what stands
		{1, 3, 0, 1, 0, 0},            // a cent over three units: the last unit carries it
		{1, 3, 2, 1, 0, 1},            //
		{100, 1, 0, 1, 0, 100},        // one unit
		{0, 2, 0, 1, 0, 0},            // a free line
		{9_000_000_000_000_000_000, 7, 0, 6, 0, 7_714_285_714_285_714_285}, // past int64 in the product
		{29700, 3, 2, 2, 0, 0}, // more than left: nothing (the CAS refuses it first)
		{29700, 3, 0, 0, 0, 0}, // no units
	} {
		if got := Refundable(tc.paid, tc.quantity, tc.held, tc.k, tc.heldAmount); got != tc.want {
			t.Errorf("Refundable(%d, %d, %d, %d, %d) = %d, want %d", tc.paid, tc.quantity, tc.held, tc.k, tc.heldAmount, got, tc.want)
		}
	}
}

// Refunding a line in any split sums to what it paid: every unit one by
// one, and every split of it in two requests.
func TestRefundableSumsToPaid(t *testing.T) {
	for _, paid := range []money.Money{1, 2, 99, 28700, 100001, 999999999} {
		for q := int64(1); q <= 12; q++ {
			var held int64
			var sum money.Money
			for held < q {
				sum += Refundable(paid, q, held, 1, sum)
				held++
			}
			if sum != paid {
				t.Errorf("paid %d over %d units one by one: %d", paid, q, sum)
			}
			for k := int64(1); k < q; k++ {
				a := Refundable(paid, q, 0, k, 0)
				b := Refundable(paid, q, k, q-k, a)
				if a+b != paid || a < 0 || b < 0 {
					t.Errorf("paid %d over %d units as %d + %d: %d + %d", paid, q, k, q-k, a, b)
				}
			}
		}
	}
}
