package pricing

import (
	"math/big"

	"storefront/internal/vocab/money"
)

// Refundable is what k more units of an order line refund. The
// line was charged paid (unit price × quantity − its share of the discount)
// for quantity units; held of its units, holding heldAmount, are in other
// after-sales already. Part of a line refunds pro rata, rounded down to the
// minor unit; the units that complete the line take what is left. So
// refunding a line's units in any split — one by one, or with requests given
// back in between — sums to paid exactly, and no split returns more.
func Refundable(paid money.Money, quantity, held, k int64, heldAmount money.Money) money.Money {
	if quantity <= 0 || k <= 0 || held < 0 || held+k > quantity {
		return 0
	}
	if held+k == quantity {
		return paid - heldAmount
	}
	// paid × k overflows int64 for large lines: big.Int keeps it exact.
	q := new(big.Int).Quo(new(big.Int).Mul(big.NewInt(int64(paid)), big.NewInt(k)), big.NewInt(quantity))
	return money.Money(q.Int64())
}
