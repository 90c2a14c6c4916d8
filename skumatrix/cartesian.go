package skumatrix

import (
	"errors"
	"fmt"
	"math"
)

// Limits caps the size of one goods' spec matrix. Beyond a few hundred SKUs
// both the product page and the admin save become slow, so the admin is told
// to split the goods instead of the system running out of memory one day
// (seed 003, section 4.1). A field <= 0 means "use DefaultLimits' value", so
// the zero Limits is usable and never rejects every goods by accident.
type Limits struct{ MaxDimensions, MaxSKUs int }

// DefaultLimits are the seed's suggested caps: at most 6 dimensions and 500 SKUs.
var DefaultLimits = Limits{MaxDimensions: 6, MaxSKUs: 500}

var (
	// ErrTooManyDimensions and ErrTooManySKUs are shown to the admin, hence the
	// instruction (in the admin UI's language too) rather than a bare fact.
	ErrTooManyDimensions = errors.New("skumatrix: too many spec dimensions, please split the goods into several goods (规格维度过多，请拆分商品)")
	ErrTooManySKUs       = errors.New("skumatrix: too many SKUs, please split the goods into several goods (SKU 数量过多，请拆分商品)")
	ErrEmptyDimension    = errors.New("skumatrix: spec dimension has no values")
	ErrDuplicateValue    = errors.New("skumatrix: spec value id used more than once in one goods")
	ErrInvalidSelection  = errors.New("skumatrix: spec value ids do not form a selection of this goods")
)

func (lim Limits) withDefaults() Limits {
	if lim.MaxDimensions <= 0 {
		lim.MaxDimensions = DefaultLimits.MaxDimensions
	}
	if lim.MaxSKUs <= 0 {
		lim.MaxSKUs = DefaultLimits.MaxSKUs
	}
	return lim
}

// Cartesian generates every combination of the spec dimensions; combo[i] comes
// from dims[i] and the first dimension is outermost, as in the seed
// ([[12 13] [35 36 37]] -> [12 35] [12 36] [12 37] [13 35] …). It is generated
// on the backend because combinations (and prices) from the browser cannot be
// trusted. Zero dimensions give one empty combination: the default SKU of a
// single-spec goods.
//
// All limits are checked before anything proportional to the product is
// allocated, so a hostile or mistaken admin form cannot exhaust memory.
// Errors wrap the sentinels with %w and name the offending dimension/count.
func Cartesian(dims [][]int64, lim Limits) ([][]int64, error) {
	lim = lim.withDefaults()
	if len(dims) > lim.MaxDimensions {
		return nil, fmt.Errorf("%w: %d dimensions, at most %d allowed", ErrTooManyDimensions, len(dims), lim.MaxDimensions)
	}
	// Empty dimensions first: with one present the product is 0, and "too
	// many SKUs" would be the wrong thing to tell the admin.
	for d, vals := range dims {
		if len(vals) == 0 {
			return nil, fmt.Errorf("%w: dimension %d", ErrEmptyDimension, d)
		}
	}
	total := 1
	for _, vals := range dims {
		// Division instead of multiplication so the check itself cannot overflow.
		if len(vals) > lim.MaxSKUs/total {
			return nil, fmt.Errorf("%w: dimension sizes %v give %s combinations, at most %d allowed",
				ErrTooManySKUs, dimSizes(dims), productString(dims), lim.MaxSKUs)
		}
		total *= len(vals)
	}
	// Only now is the number of values known to be small (sum <= product +
	// dims), so the duplicate check may allocate.
	if err := checkDuplicates(dims); err != nil {
		return nil, err
	}

	n := len(dims)
	backing := make([]int64, total*n)
	out := make([][]int64, total)
	idx := make([]int, n)
	for i := range out {
		// Full slice expression: appending to one combo must not overwrite the next.
		combo := backing[i*n : (i+1)*n : (i+1)*n]
		for d, j := range idx {
			combo[d] = dims[d][j]
		}
		out[i] = combo
		// Odometer with the last dimension turning fastest keeps the first
		// dimension outermost, the seed's order, without recursion.
		for d := n - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(dims[d]) {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

// checkDuplicates rejects a value id that appears twice, within one dimension
// or across two: the id alone must identify its dimension, or a selection
// could not be mapped back to dimensions.
func checkDuplicates(dims [][]int64) error {
	n := 0
	for _, vals := range dims {
		n += len(vals)
	}
	dimOf := make(map[int64]int, n)
	for d, vals := range dims {
		for _, v := range vals {
			if prev, ok := dimOf[v]; ok {
				return fmt.Errorf("%w: value %d in dimension %d and dimension %d", ErrDuplicateValue, v, prev, d)
			}
			dimOf[v] = d
		}
	}
	return nil
}

func dimSizes(dims [][]int64) []int {
	sizes := make([]int, len(dims))
	for d, vals := range dims {
		sizes[d] = len(vals)
	}
	return sizes
}

// productString reports the full product for the admin, saturating instead of
// overflowing when the form is absurdly large.
func productString(dims [][]int64) string {
	p := 1
	for _, vals := range dims {
		if len(vals) > math.MaxInt/p {
			return fmt.Sprintf("more than %d", math.MaxInt)
		}
		p *= len(vals)
	}
	return fmt.Sprint(p)
}
