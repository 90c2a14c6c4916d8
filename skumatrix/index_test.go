package skumatrix

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The seed's T-shirt: colour 黑色(1) 白色(2) 藏青(3) × size S(4) M(5) L(6) XL(7),
// SKUs in Cartesian order, so position = colour*4 + size.
var (
	tshirtDims = [][]int64{{1, 2, 3}, {4, 5, 6, 7}}
	//                  S   M  L  XL
	tshirtStock = []int64{
		10, 5, 3, 0, // 黑色: XL sold out
		0, 8, 2, 0, // 白色: S and XL sold out, M has stock but is disabled
		0, 0, 4, 0, // 藏青: only L left
	}
	tshirtDisabled = map[int]bool{5: true} // 白色 M
)

func tshirtSKUs(t testing.TB) []SKU {
	combos, err := Cartesian(tshirtDims, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	skus := make([]SKU, len(combos))
	for i, c := range combos {
		skus[i] = SKU{ValueIDs: c, Enabled: !tshirtDisabled[i]}
	}
	return skus
}

func stockFunc(stock []int64) func(int) int64 {
	return func(pos int) int64 { return stock[pos] }
}

func TestSelectableTShirt(t *testing.T) {
	skus := tshirtSKUs(t)
	ix, err := NewIndex(tshirtDims, skus)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ix.Values(), []int64{1, 2, 3, 4, 5, 6, 7}; !slices.Equal(got, want) {
		t.Fatalf("Values() = %v, want %v", got, want)
	}
	if got := ix.nskus; got != 12 {
		t.Fatalf("the index has %d SKUs, want 12", got)
	}
	avail := ix.Avail(stockFunc(tshirtStock))
	// Available: 黑S(0) 黑M(1) 黑L(2) 白L(6) 藏青L(10).
	if want := (Bitset{1<<0 | 1<<1 | 1<<2 | 1<<6 | 1<<10}); !slices.Equal(avail, want) {
		t.Fatalf("Avail = %b, want %b", avail, want)
	}

	const T, F = true, false
	for _, tc := range []struct {
		name     string
		selected []int64
		want     []bool // 黑 白 藏青 | S M L XL
	}{
		{"nothing selected", nil, []bool{T, T, T, T, T, T, F}},
		{"黑色", []int64{1}, []bool{T, T, T, T, T, T, F}},
		{"白色: S sold out, M disabled", []int64{2}, []bool{T, T, T, F, F, T, F}},
		{"藏青: only L", []int64{3}, []bool{T, T, T, F, F, T, F}},
		{"M: 白M disabled, 藏青M sold out", []int64{5}, []bool{T, F, F, T, T, T, F}},
		{"白色 L", []int64{2, 6}, []bool{T, T, T, F, F, T, F}},
		{"L 白色 (order does not matter)", []int64{6, 2}, []bool{T, T, T, F, F, T, F}},
		// Reachable through a shared link: no colour has XL, yet the sizes of
		// 黑色 stay selectable so the user can switch away from XL.
		{"黑色 XL (unavailable)", []int64{1, 7}, []bool{F, F, F, T, T, T, F}},
		{"藏青 S (unavailable)", []int64{3, 4}, []bool{T, F, F, F, F, T, F}},
	} {
		got, err := ix.Selectable(avail, tc.selected, nil)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s: Selectable(%v) = %v, %v, want %v, nil", tc.name, tc.selected, got, err, tc.want)
		}
		if oracle := oracleSelectable(tshirtDims, skus, tshirtStock, tc.selected); !slices.Equal(oracle, tc.want) {
			t.Errorf("%s: seed oracle(%v) = %v, want %v (hand-checked expectation or oracle port is wrong)", tc.name, tc.selected, oracle, tc.want)
		}
	}
}

func TestSelectableNothingAvailable(t *testing.T) {
	ix, err := NewIndex(tshirtDims, tshirtSKUs(t))
	if err != nil {
		t.Fatal(err)
	}
	avail := ix.Avail(func(int) int64 { return 0 })
	got, err := ix.Selectable(avail, []int64{1}, nil)
	if want := make([]bool, 7); err != nil || !slices.Equal(got, want) {
		t.Errorf("Selectable with no stock = %v, %v, want %v, nil", got, err, want)
	}
}

func TestSelectableSingleSpecGoods(t *testing.T) {
	ix, err := NewIndex(nil, []SKU{{ValueIDs: nil, Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	avail := ix.Avail(func(int) int64 { return 1 })
	got, err := ix.Selectable(avail, nil, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("Selectable(single-spec goods) = %v, %v, want [], nil", got, err)
	}
	if err := ix.ValidateSelection([]int64{1}); !errors.Is(err, ErrInvalidSelection) {
		t.Errorf("ValidateSelection([1]) on single-spec goods = %v, want %v", err, ErrInvalidSelection)
	}
}

func TestSelectableReusesBuffer(t *testing.T) {
	ix, err := NewIndex(tshirtDims, tshirtSKUs(t))
	if err != nil {
		t.Fatal(err)
	}
	avail := ix.Avail(stockFunc(tshirtStock))
	buf := make([]bool, 3, 32)
	for i := range buf[:cap(buf)] {
		buf[:cap(buf)][i] = true // stale answers must be cleared
	}
	got, err := ix.Selectable(avail, []int64{3}, buf)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &buf[:1][0] {
		t.Errorf("Selectable allocated although cap(out) = %d was enough", cap(buf))
	}
	if want := []bool{true, true, true, false, false, true, false}; !slices.Equal(got, want) {
		t.Errorf("Selectable([3]) into a dirty buffer = %v, want %v", got, want)
	}

	got, err = ix.Selectable(avail, []int64{99}, got)
	if !errors.Is(err, ErrInvalidSelection) || len(got) != 0 || cap(got) != cap(buf) {
		t.Errorf("Selectable([99]) = len %d cap %d, %v; want len 0, the caller's buffer and %v", len(got), cap(got), err, ErrInvalidSelection)
	}
}

func TestSelectableRejectsForeignBitset(t *testing.T) {
	ix, err := NewIndex(tshirtDims, tshirtSKUs(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, avail := range []Bitset{nil, make(Bitset, 2)} {
		if _, err := ix.Selectable(avail, nil, nil); err == nil {
			t.Errorf("Selectable(avail of %d words) on a 1-word index succeeded, want an error", len(avail))
		}
	}
}

func TestValidateSelection(t *testing.T) {
	ix, err := NewIndex(tshirtDims, tshirtSKUs(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		selected []int64
		detail   string // "" means valid
	}{
		{nil, ""},
		{[]int64{}, ""},
		{[]int64{1}, ""},
		{[]int64{7}, ""},
		{[]int64{7, 1}, ""},
		{[]int64{8}, "value 8"},
		{[]int64{0}, "value 0"},
		{[]int64{-1}, "value -1"},
		{[]int64{1, 99}, "value 99"},
		{[]int64{1, 2}, "dimension 0"},
		{[]int64{4, 7}, "dimension 1"},
		{[]int64{1, 1}, "selected twice"},
		{[]int64{6, 6}, "selected twice"},
		{[]int64{1, 4, 5}, "3 values selected"},
		{[]int64{1, 4, 1}, "3 values selected"},
	} {
		err := ix.ValidateSelection(tc.selected)
		if tc.detail == "" {
			if err != nil {
				t.Errorf("ValidateSelection(%v) = %v, want nil", tc.selected, err)
			}
			continue
		}
		if !errors.Is(err, ErrInvalidSelection) {
			t.Errorf("ValidateSelection(%v) = %v, want %v", tc.selected, err, ErrInvalidSelection)
			continue
		}
		if !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("ValidateSelection(%v) = %q, want it to mention %q", tc.selected, err, tc.detail)
		}
		// Selectable must refuse exactly what ValidateSelection refuses.
		if _, serr := ix.Selectable(ix.Avail(stockFunc(tshirtStock)), tc.selected, nil); !errors.Is(serr, ErrInvalidSelection) {
			t.Errorf("Selectable(%v) error = %v, want %v", tc.selected, serr, ErrInvalidSelection)
		}
	}
}

func TestNewIndexErrors(t *testing.T) {
	dims := [][]int64{{1, 2}, {3, 4}}
	for _, tc := range []struct {
		name   string
		dims   [][]int64
		skus   []SKU
		is     error // nil: only a message check
		detail string
	}{
		{"unknown value", dims, []SKU{{ValueIDs: []int64{1, 5}}}, nil, "value 5 belongs to no dimension"},
		{"two values of one dimension", dims, []SKU{{ValueIDs: []int64{1, 2}}}, nil, "two values from dimension 0"},
		{"same value twice", dims, []SKU{{ValueIDs: []int64{3, 3}}}, nil, "two values from dimension 1"},
		{"missing dimension", dims, []SKU{{ValueIDs: []int64{1}}}, nil, "has 1 values"},
		{"too many values", dims, []SKU{{ValueIDs: []int64{1, 3, 4}}}, nil, "has 3 values"},
		{"duplicate combination", dims, []SKU{{ValueIDs: []int64{1, 3}}, {ValueIDs: []int64{3, 1}}}, nil, `spec key "1_3"`},
		{"empty dimension", [][]int64{{1}, {}}, nil, ErrEmptyDimension, "dimension 1"},
		{"duplicate value", [][]int64{{1, 2}, {2}}, nil, ErrDuplicateValue, "value 2"},
	} {
		ix, err := NewIndex(tc.dims, tc.skus)
		if err == nil {
			t.Errorf("%s: NewIndex succeeded, want an error", tc.name)
			continue
		}
		if ix != nil {
			t.Errorf("%s: NewIndex returned an index with error %v", tc.name, err)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: NewIndex error = %v, want errors.Is %v", tc.name, err, tc.is)
		}
		if !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%s: NewIndex error %q does not mention %q", tc.name, err, tc.detail)
		}
	}
}

func TestNewIndexCopiesInput(t *testing.T) {
	dims := [][]int64{{1, 2}, {3, 4}}
	skus := []SKU{{ValueIDs: []int64{1, 3}, Enabled: true}, {ValueIDs: []int64{2, 4}, Enabled: true}}
	ix, err := NewIndex(dims, skus)
	if err != nil {
		t.Fatal(err)
	}
	dims[0][0] = 100
	skus[0].ValueIDs[0] = 2
	vals := ix.Values()
	vals[1] = 100
	if got, want := ix.Values(), []int64{1, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("Values() after mutating inputs and a previous result = %v, want %v", got, want)
	}
	got, err := ix.Selectable(ix.Avail(func(int) int64 { return 1 }), []int64{1}, nil)
	if want := []bool{true, true, true, false}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Selectable([1]) after mutating inputs = %v, %v, want %v", got, err, want)
	}
}

func TestAvailAsksOnlyEnabledSKUs(t *testing.T) {
	ix, err := NewIndex(tshirtDims, tshirtSKUs(t))
	if err != nil {
		t.Fatal(err)
	}
	var asked []int
	ix.Avail(func(pos int) int64 { asked = append(asked, pos); return 1 })
	if want := []int{0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11}; !slices.Equal(asked, want) {
		t.Errorf("Avail asked stock of %v, want %v", asked, want)
	}
}

// randomGoods builds a goods like the ones admins create, but with every kind
// of gap: missing combinations, disabled SKUs, zero (or negative, after an
// oversell correction) stock, shuffled SKU order and arbitrary value ids.
func randomGoods(r *rand.Rand, maxDims, maxVals int) (dims [][]int64, skus []SKU, stock []int64) {
	ndims := 1 + r.IntN(maxDims)
	used := map[int64]bool{}
	dims = make([][]int64, ndims)
	for d := range dims {
		for range 1 + r.IntN(maxVals) {
			var v int64
			for v = r.Int64N(200) - 20; used[v]; v = r.Int64N(200) - 20 {
			}
			used[v] = true
			dims[d] = append(dims[d], v)
		}
	}
	combos, err := Cartesian(dims, Limits{MaxDimensions: maxDims, MaxSKUs: 1 << 20})
	if err != nil {
		panic(err)
	}
	keep := 0.5 + r.Float64()/2
	if r.IntN(4) == 0 {
		keep = 1 // the full product
	}
	for _, c := range combos {
		if r.Float64() >= keep {
			continue
		}
		slices.Reverse(c) // SKU value order must not matter
		if r.IntN(2) == 0 {
			r.Shuffle(len(c), func(i, j int) { c[i], c[j] = c[j], c[i] })
		}
		skus = append(skus, SKU{ValueIDs: c, Enabled: r.IntN(5) != 0})
		switch n := r.IntN(10); {
		case n < 3:
			stock = append(stock, 0)
		case n == 3:
			stock = append(stock, -1-r.Int64N(3))
		default:
			stock = append(stock, 1+r.Int64N(50))
		}
	}
	r.Shuffle(len(skus), func(i, j int) {
		skus[i], skus[j] = skus[j], skus[i]
		stock[i], stock[j] = stock[j], stock[i]
	})
	return dims, skus, stock
}

// randomSelection picks at most one value from some dimensions, in random order.
func randomSelection(r *rand.Rand, dims [][]int64) []int64 {
	var sel []int64
	for _, vals := range dims {
		if r.IntN(5) < 2 {
			sel = append(sel, vals[r.IntN(len(vals))])
		}
	}
	r.Shuffle(len(sel), func(i, j int) { sel[i], sel[j] = sel[j], sel[i] })
	return sel
}

func TestSelectableMatchesSeedOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 0x5eed))
	var out []bool
	for iter := range 2000 {
		dims, skus, stock := randomGoods(r, 5, 6)
		ix, err := NewIndex(dims, skus)
		if err != nil {
			t.Fatalf("iter %d: NewIndex: %v", iter, err)
		}
		avail := ix.Avail(stockFunc(stock))
		for range 5 {
			sel := randomSelection(r, dims)
			out, err = ix.Selectable(avail, sel, out)
			if err != nil {
				t.Fatalf("iter %d: Selectable(%v): %v", iter, sel, err)
			}
			if want := oracleSelectable(dims, skus, stock, sel); !slices.Equal(out, want) {
				t.Fatalf("iter %d: dims %v, skus %v, stock %v:\nSelectable(%v) = %v\nseed oracle   = %v",
					iter, dims, skus, stock, sel, out, want)
			}
		}
	}
}

// goods500 is the largest goods DefaultLimits allows: 5×5×5×4 = 500 SKUs,
// every seventh one sold out and every eleventh disabled.
func goods500(t testing.TB) (dims [][]int64, skus []SKU, stock []int64) {
	dims = dimsOfSizes(5, 5, 5, 4)
	combos, err := Cartesian(dims, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range combos {
		skus = append(skus, SKU{ValueIDs: c, Enabled: i%11 != 0})
		stock = append(stock, int64(i%7))
	}
	return dims, skus, stock
}

func TestSelectableDoesNotAllocate(t *testing.T) {
	dims, skus, stock := goods500(t)
	ix, err := NewIndex(dims, skus)
	if err != nil {
		t.Fatal(err)
	}
	avail := ix.Avail(stockFunc(stock))
	for _, sel := range [][]int64{nil, {2, 13}, {2, 7, 13, 19}} {
		buf := make([]bool, 0, len(ix.Values()))
		allocs := testing.AllocsPerRun(100, func() {
			buf, err = ix.Selectable(avail, sel, buf)
		})
		if err != nil {
			t.Fatal(err)
		}
		if allocs != 0 {
			t.Errorf("Selectable(%v) with a big enough buffer: %v allocs per call, want 0", sel, allocs)
		}
		if want := oracleSelectable(dims, skus, stock, sel); !slices.Equal(buf, want) {
			t.Errorf("goods500 Selectable(%v) = %v, seed oracle %v", sel, buf, want)
		}
	}
	if allocs := testing.AllocsPerRun(100, func() { err = ix.ValidateSelection([]int64{2, 13}) }); allocs != 0 || err != nil {
		t.Errorf("ValidateSelection: %v allocs per call, err %v; want 0, nil", allocs, err)
	}
}

// TestSelectableConcurrent is meant for -race: one Index and one Bitset are
// shared by all requests of a goods.
func TestSelectableConcurrent(t *testing.T) {
	dims, skus, stock := goods500(t)
	ix, err := NewIndex(dims, skus)
	if err != nil {
		t.Fatal(err)
	}
	avail := ix.Avail(stockFunc(stock))
	sel := []int64{3, 12}
	want := oracleSelectable(dims, skus, stock, sel)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			var out []bool
			for range 200 {
				var err error
				if out, err = ix.Selectable(avail, sel, out); err != nil || !slices.Equal(out, want) {
					t.Errorf("concurrent Selectable(%v) = %v, %v, want %v", sel, out, err, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
