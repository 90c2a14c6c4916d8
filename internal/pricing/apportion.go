package pricing

import (
	"math/big"
	"slices"

	"storefront/internal/vocab/money"
)

// apportion splits total over the lines in proportion to their subtotals,
// writing each line's share to out: every share is floor(total × sub / sum)
// in exact integer arithmetic, and the minor units left over go one each to
// the lines with the largest remainders (ties to the earlier line), so the
// shares sum to total exactly and a refund of one line never returns more
// than that line was charged.
func apportion(total money.Money, subs, out []money.Money) {
	var sum int64
	for _, s := range subs {
		sum += int64(s)
	}
	if total == 0 || sum == 0 {
		return
	}
	type rest struct {
		i   int
		rem *big.Int
	}
	rests := make([]rest, len(subs))
	left := total
	T, S := big.NewInt(int64(total)), big.NewInt(sum)
	for i, s := range subs {
		// total × s overflows int64 for large orders: big.Int keeps it exact.
		quo, rem := new(big.Int).QuoRem(new(big.Int).Mul(T, big.NewInt(int64(s))), S, new(big.Int))
		out[i] = money.Money(quo.Int64())
		left -= out[i]
		rests[i] = rest{i, rem}
	}
	slices.SortStableFunc(rests, func(a, b rest) int { return b.rem.Cmp(a.rem) })
	for k := 0; left > 0; k++ {
		out[rests[k].i]++
		left--
	}
}
