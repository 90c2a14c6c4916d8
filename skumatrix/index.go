package skumatrix

import (
	"fmt"
	"math/bits"
	"slices"
)

// Bitset is a set of SKU positions, bit i of word i/64 standing for skus[i]
// as passed to NewIndex.
type Bitset []uint64

// SKU is one spec combination of a goods as NewIndex sees it.
type SKU struct {
	ValueIDs []int64
	Enabled  bool
}

// Index answers the product page's "which spec values can still be chosen"
// question (seed 003, section 4.3) without rebuilding the seed's per-request
// hash maps: the inverted index value -> SKUs is built once per catalog version
// as bitsets, and each request only ANDs a handful of 64-bit words. Stock
// changes far more often than the catalog, so it is kept out of the Index and
// passed in as a Bitset from Avail.
//
// An Index is immutable after NewIndex and safe for concurrent use.
type Index struct {
	values   []int64         // dimension order, then value order: the layout of Selectable's out
	dimStart []int           // values of dimension d are values[dimStart[d]:dimStart[d+1]]
	valueDim []int32         // value index -> dimension
	valueIdx map[int64]int32 // value id -> value index
	nskus    int
	words    int      // words per bitset
	postings []uint64 // value index v owns postings[v*words : (v+1)*words]
	enabled  Bitset
}

// NewIndex builds the index of one goods. dims holds the value ids of each
// spec dimension in display order; skus is in a stable order and a SKU's
// position in it is its bit in every Bitset.
//
// Every SKU must take exactly one value from each dimension, and no two SKUs
// may share a combination: anything else means the catalog rows are corrupt
// (uk_goods_spec forbids duplicates), and guessing would show the customer
// a wrong matrix.
func NewIndex(dims [][]int64, skus []SKU) (*Index, error) {
	nvals := 0
	for d, vals := range dims {
		if len(vals) == 0 {
			return nil, fmt.Errorf("%w: dimension %d", ErrEmptyDimension, d)
		}
		nvals += len(vals)
	}
	ix := &Index{
		values:   make([]int64, 0, nvals),
		dimStart: make([]int, 0, len(dims)+1),
		valueDim: make([]int32, 0, nvals),
		valueIdx: make(map[int64]int32, nvals),
		nskus:    len(skus),
		words:    (len(skus) + 63) / 64,
	}
	for d, vals := range dims {
		ix.dimStart = append(ix.dimStart, len(ix.values))
		for _, v := range vals {
			if prev, ok := ix.valueIdx[v]; ok {
				return nil, fmt.Errorf("%w: value %d in dimension %d and dimension %d", ErrDuplicateValue, v, ix.valueDim[prev], d)
			}
			ix.valueIdx[v] = int32(len(ix.values))
			ix.values = append(ix.values, v)
			ix.valueDim = append(ix.valueDim, int32(d))
		}
	}
	ix.dimStart = append(ix.dimStart, len(ix.values))

	ix.postings = make([]uint64, nvals*ix.words)
	ix.enabled = make(Bitset, ix.words)
	// seen[d] == pos+1 marks dimension d as already used by SKU pos; stamping
	// avoids clearing the slice for every SKU.
	seen := make([]int, len(dims))
	keys := make(map[string]int, len(skus))
	for pos, sku := range skus {
		if len(sku.ValueIDs) != len(dims) {
			return nil, fmt.Errorf("skumatrix: sku %d %v has %d values, the goods has %d dimensions", pos, sku.ValueIDs, len(sku.ValueIDs), len(dims))
		}
		w, bit := pos/64, uint64(1)<<(pos%64)
		for _, v := range sku.ValueIDs {
			vi, ok := ix.valueIdx[v]
			if !ok {
				return nil, fmt.Errorf("skumatrix: sku %d %v: value %d belongs to no dimension of the goods", pos, sku.ValueIDs, v)
			}
			d := ix.valueDim[vi]
			if seen[d] == pos+1 {
				return nil, fmt.Errorf("skumatrix: sku %d %v has two values from dimension %d", pos, sku.ValueIDs, d)
			}
			seen[d] = pos + 1
			ix.postings[int(vi)*ix.words+w] |= bit
		}
		key := SpecKey(sku.ValueIDs)
		if prev, ok := keys[key]; ok {
			return nil, fmt.Errorf("skumatrix: sku %d and sku %d are both spec key %q", prev, pos, key)
		}
		keys[key] = pos
		if sku.Enabled {
			ix.enabled[w] |= bit
		}
	}
	return ix, nil
}

// Values returns a fresh copy of all value ids, dimension order then value
// order; Selectable's out[i] answers for Values()[i].
func (ix *Index) Values() []int64 { return slices.Clone(ix.values) }

// Avail returns the SKUs that are enabled and have stock(pos) > 0. Build it
// once per stock snapshot and share it across requests; stock is only asked
// about enabled SKUs.
func (ix *Index) Avail(stock func(pos int) int64) Bitset {
	b := make(Bitset, ix.words)
	for w, word := range ix.enabled {
		for word != 0 {
			i := bits.TrailingZeros64(word)
			word &= word - 1
			if stock(w*64+i) > 0 {
				b[w] |= 1 << i
			}
		}
	}
	return b
}

// selScratch bounds the selection kept on the stack; with at most one value
// per dimension and DefaultLimits' 6 dimensions it is never exceeded in
// practice, and beyond it Selectable merely allocates.
const selScratch = 16

// ValidateSelection reports, wrapping ErrInvalidSelection, whether selected
// is not a partial selection of this goods: an unknown id, an id given twice,
// two ids from one dimension, or more ids than dimensions.
func (ix *Index) ValidateSelection(selected []int64) error {
	var buf [selScratch]int32
	_, err := ix.resolve(selected, buf[:0])
	return err
}

// resolve maps selected ids to value indexes, appending to sel, and validates them.
func (ix *Index) resolve(selected []int64, sel []int32) ([]int32, error) {
	if len(selected) > len(ix.dimStart)-1 {
		return sel, fmt.Errorf("%w: %d values selected, the goods has %d dimensions", ErrInvalidSelection, len(selected), len(ix.dimStart)-1)
	}
	for _, id := range selected {
		vi, ok := ix.valueIdx[id]
		if !ok {
			return sel, fmt.Errorf("%w: value %d is not a spec value of the goods", ErrInvalidSelection, id)
		}
		// Quadratic, but over at most one id per dimension: cheaper than a set.
		for j, prev := range sel {
			if prev == vi {
				return sel, fmt.Errorf("%w: value %d selected twice", ErrInvalidSelection, id)
			}
			if ix.valueDim[prev] == ix.valueDim[vi] {
				return sel, fmt.Errorf("%w: values %d and %d are both from dimension %d", ErrInvalidSelection, selected[j], id, ix.valueDim[vi])
			}
		}
		sel = append(sel, vi)
	}
	return sel, nil
}

// Selectable sets out[i] (for Values()[i]) to whether some SKU in avail
// contains that value together with the selected values of the other
// dimensions; the value's own dimension's selection is replaced by the value,
// so the user can switch e.g. colour without first deselecting it. This is
// exactly the seed's buildSelectableMatrix, restricted to available SKUs.
//
// out is reused when its capacity suffices, and then the call does not
// allocate, so the product page can run it on every click. On error out[:0]
// is returned, keeping the caller's buffer. avail must come from ix.Avail.
func (ix *Index) Selectable(avail Bitset, selected []int64, out []bool) ([]bool, error) {
	if len(avail) != ix.words {
		return out[:0], fmt.Errorf("skumatrix: avail has %d words, the index needs %d (bitset from another index?)", len(avail), ix.words)
	}
	var buf [selScratch]int32
	sel, err := ix.resolve(selected, buf[:0])
	if err != nil {
		return out[:0], err
	}
	n := len(ix.values)
	if cap(out) >= n {
		out = out[:n]
		clear(out)
	} else {
		out = make([]bool, n)
	}
	nw := ix.words
	for d := range len(ix.dimStart) - 1 {
		lo, hi := ix.dimStart[d], ix.dimStart[d+1]
		left := hi - lo // values of d still false; stop scanning words once all are true
		// Word-outer: the AND of the other dimensions' selections is computed
		// once per word and shared by every candidate value of d, so no
		// scratch bitset is needed.
		for w := 0; w < nw && left > 0; w++ {
			m := avail[w]
			for _, s := range sel {
				if m == 0 {
					break
				}
				if int(ix.valueDim[s]) != d {
					m &= ix.postings[int(s)*nw+w]
				}
			}
			if m == 0 {
				continue
			}
			for v := lo; v < hi; v++ {
				if !out[v] && ix.postings[v*nw+w]&m != 0 {
					out[v] = true
					left--
				}
			}
		}
	}
	return out, nil
}
