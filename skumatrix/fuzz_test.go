package skumatrix

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func FuzzSpecKey(f *testing.F) {
	f.Add([]byte{1, 35, 12}, uint64(0), "12_35")
	f.Add([]byte{1, 5, 5, 200, 0}, uint64(7), "5_5")
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 255, 255, 255, 255, 255, 255, 255, 255}, uint64(1), "-1_0")
	f.Add([]byte{}, uint64(0), "")
	f.Add([]byte{1}, uint64(0), "35_12")
	f.Add([]byte{1}, uint64(0), "01")
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, key string) {
		ids := fuzzIDs(data)
		k := SpecKey(ids)

		perm := slices.Clone(ids)
		rand.New(rand.NewPCG(seed, 0)).Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
		if pk := SpecKey(perm); pk != k {
			t.Errorf("SpecKey(%v) = %q but SpecKey(%v) = %q, want the same key for a permutation", ids, k, perm, pk)
		}

		got, err := parseSpecKey(k)
		if want := slices.Sorted(slices.Values(ids)); err != nil || !slices.Equal(got, want) {
			t.Errorf("parseSpecKey(SpecKey(%v) = %q) = %v, %v, want %v, nil", ids, k, got, err, want)
		}

		// Whatever parseSpecKey accepts must be the one canonical spelling.
		if parsed, err := parseSpecKey(key); err == nil {
			if back := SpecKey(parsed); back != key {
				t.Errorf("parseSpecKey(%q) = %v but SpecKey of that = %q: a non-canonical key was accepted", key, parsed, back)
			}
		}
	})
}

// fuzzIDs reads int64s from data: if the first byte is odd, one small id per
// byte (so duplicates and sign changes are frequent), else 8 bytes per id.
func fuzzIDs(data []byte) []int64 {
	if len(data) == 0 {
		return nil
	}
	mode, data := data[0], data[1:]
	var ids []int64
	if mode&1 == 1 {
		for _, b := range data {
			ids = append(ids, int64(int8(b)))
		}
		return ids
	}
	for len(data) >= 8 {
		ids = append(ids, int64(binary.LittleEndian.Uint64(data)))
		data = data[8:]
	}
	return ids
}

// fuzzReader hands out bytes and then zeros, so every input decodes to a goods.
type fuzzReader []byte

func (r *fuzzReader) next() byte {
	if len(*r) == 0 {
		return 0
	}
	b := (*r)[0]
	*r = (*r)[1:]
	return b
}

// decodeGoods turns fuzz bytes into up to 4 dimensions of up to 4 values (so
// up to 256 SKUs, 4 bitset words), per-combination flags and a selection that
// may be invalid.
func decodeGoods(data []byte) (dims [][]int64, skus []SKU, stock []int64, sel []int64) {
	r := fuzzReader(data)
	ndims := 1 + int(r.next()%4)
	offset, stride := int64(int8(r.next())), 1+int64(r.next()%3)
	next := int64(0)
	dims = make([][]int64, ndims)
	var all []int64
	for d := range dims {
		for range 1 + int(r.next()%4) {
			v := offset + next*stride
			next++
			dims[d] = append(dims[d], v)
			all = append(all, v)
		}
	}
	combos, err := Cartesian(dims, Limits{MaxDimensions: 4, MaxSKUs: 256})
	if err != nil {
		panic(err)
	}
	for _, c := range combos {
		// Zero (also once the input runs out) means present, enabled, in stock.
		flags := r.next()
		if flags&1 != 0 {
			continue
		}
		skus = append(skus, SKU{ValueIDs: c, Enabled: flags&2 == 0})
		if flags&4 != 0 {
			stock = append(stock, 0)
		} else {
			stock = append(stock, 1)
		}
	}
	for range int(r.next() % 6) {
		// One index past the values is an id the goods does not have.
		i := int(r.next()) % (len(all) + 1)
		if i == len(all) {
			sel = append(sel, offset+next*stride)
		} else {
			sel = append(sel, all[i])
		}
	}
	return dims, skus, stock, sel
}

// validSelection restates the selection rules independently of Index.
func validSelection(dims [][]int64, sel []int64) bool {
	used := make([]bool, len(dims))
	for _, id := range sel {
		d := slices.IndexFunc(dims, func(vals []int64) bool { return slices.Contains(vals, id) })
		if d < 0 || used[d] {
			return false
		}
		used[d] = true
	}
	return true
}

func FuzzSelectable(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0, 2, 3, 0, 0, 0, 4, 0, 2, 0, 0, 0, 0, 0, 0, 2, 0, 5})        // T-shirt-like
	f.Add([]byte{3, 10, 1, 3, 3, 3, 3, 1, 2, 4, 6, 0, 0, 0, 0, 5, 3, 1, 7, 12, 200}) // 4 dims, 256 SKUs
	f.Add([]byte{1, 0, 0, 1, 1, 255, 255, 255, 255, 3, 0, 0, 1})                     // invalid selection
	f.Fuzz(func(t *testing.T, data []byte) {
		dims, skus, stock, sel := decodeGoods(data)
		ix, err := NewIndex(dims, skus)
		if err != nil {
			t.Fatalf("NewIndex(%v, %v): %v", dims, skus, err)
		}
		got, err := ix.Selectable(ix.Avail(stockFunc(stock)), sel, nil)
		if !validSelection(dims, sel) {
			if !errors.Is(err, ErrInvalidSelection) {
				t.Fatalf("dims %v: Selectable(%v) error = %v, want %v", dims, sel, err, ErrInvalidSelection)
			}
			return
		}
		if err != nil {
			t.Fatalf("dims %v: Selectable(%v): %v", dims, sel, err)
		}
		if want := oracleSelectable(dims, skus, stock, sel); !slices.Equal(got, want) {
			t.Fatalf("dims %v, skus %v, stock %v:\nSelectable(%v) = %v\nseed oracle   = %v", dims, skus, stock, sel, got, want)
		}
	})
}
