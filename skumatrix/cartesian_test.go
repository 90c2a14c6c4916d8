package skumatrix

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestCartesian(t *testing.T) {
	for _, tc := range []struct {
		dims [][]int64
		want [][]int64
	}{
		{nil, [][]int64{{}}},
		{[][]int64{}, [][]int64{{}}},
		{[][]int64{{12}}, [][]int64{{12}}},
		{[][]int64{{13, 12}}, [][]int64{{13}, {12}}},
		// The seed's example: first dimension outermost.
		{[][]int64{{12, 13}, {35, 36, 37}}, [][]int64{{12, 35}, {12, 36}, {12, 37}, {13, 35}, {13, 36}, {13, 37}}},
		// Values keep their given order, they are not sorted.
		{[][]int64{{2, 1}, {9}, {4, 3}}, [][]int64{{2, 9, 4}, {2, 9, 3}, {1, 9, 4}, {1, 9, 3}}},
	} {
		got, err := Cartesian(tc.dims, DefaultLimits)
		if err != nil || !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("Cartesian(%v) = %v, %v, want %v, nil", tc.dims, got, err, tc.want)
		}
	}
}

func TestCartesianZeroDimsIsOneEmptyCombo(t *testing.T) {
	got, err := Cartesian(nil, DefaultLimits)
	if err != nil || len(got) != 1 || got[0] == nil || len(got[0]) != 0 {
		t.Fatalf("Cartesian(nil) = %#v, %v, want [[]], nil", got, err)
	}
	if k := SpecKey(got[0]); k != "" {
		t.Errorf("SpecKey(Cartesian(nil)[0]) = %q, want %q", k, "")
	}
}

func TestCartesianCountsAndOrder(t *testing.T) {
	for _, sizes := range [][]int{{1}, {3, 4}, {2, 2, 2}, {5, 5, 5, 4}, {1, 7, 1, 3}, {2, 2, 2, 2, 2, 2}} {
		dims := make([][]int64, len(sizes))
		next := int64(1)
		want := 1
		for d, n := range sizes {
			for range n {
				dims[d] = append(dims[d], next)
				next++
			}
			want *= n
		}
		got, err := Cartesian(dims, DefaultLimits)
		if err != nil {
			t.Errorf("Cartesian(sizes %v) error %v", sizes, err)
			continue
		}
		if len(got) != want {
			t.Errorf("len(Cartesian(sizes %v)) = %d, want %d", sizes, len(got), want)
		}
		seen := map[string]bool{}
		for i, combo := range got {
			// Position i written in mixed radix (first dimension most
			// significant) is exactly the combo's value indexes.
			rest := i
			for d := len(sizes) - 1; d >= 0; d-- {
				if w := dims[d][rest%sizes[d]]; combo[d] != w {
					t.Errorf("Cartesian(sizes %v)[%d][%d] = %d, want %d", sizes, i, d, combo[d], w)
				}
				rest /= sizes[d]
			}
			k := SpecKey(combo)
			if seen[k] {
				t.Errorf("Cartesian(sizes %v) repeats %q", sizes, k)
			}
			seen[k] = true
		}
	}
}

func TestCartesianCombosDoNotAlias(t *testing.T) {
	got, err := Cartesian([][]int64{{1, 2}, {3, 4}}, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(got[0], 99)
	if got[1][0] != 1 || got[1][1] != 4 {
		t.Errorf("appending to combo 0 changed combo 1 to %v", got[1])
	}
}

// dimsOfSizes builds dimensions with distinct ids 1, 2, 3, ….
func dimsOfSizes(sizes ...int) [][]int64 {
	dims := make([][]int64, len(sizes))
	next := int64(1)
	for d, n := range sizes {
		dims[d] = make([]int64, n)
		for i := range dims[d] {
			dims[d][i] = next
			next++
		}
	}
	return dims
}

func TestCartesianErrors(t *testing.T) {
	huge := make([]int64, 1<<20)
	for i := range huge {
		huge[i] = int64(i + 1000)
	}
	for _, tc := range []struct {
		name   string
		dims   [][]int64
		lim    Limits
		want   error
		detail string // must appear in the message
	}{
		{"7 dims", dimsOfSizes(1, 1, 1, 1, 1, 1, 1), DefaultLimits, ErrTooManyDimensions, "7 dimensions"},
		{"4^5 = 1024 SKUs", dimsOfSizes(4, 4, 4, 4, 4), DefaultLimits, ErrTooManySKUs, "1024"},
		{"6 dims 501 SKUs", dimsOfSizes(3, 167, 1, 1, 1, 1), DefaultLimits, ErrTooManySKUs, "501"},
		{"one huge dim", [][]int64{huge}, DefaultLimits, ErrTooManySKUs, "1048576"},
		// 2^20^4 overflows int64: the check must not wrap around to "small".
		{"overflowing product", [][]int64{huge, huge, huge, huge}, Limits{MaxDimensions: 6, MaxSKUs: 1 << 62}, ErrTooManySKUs, "more than"},
		{"custom limit", dimsOfSizes(3, 3), Limits{MaxDimensions: 2, MaxSKUs: 8}, ErrTooManySKUs, "9"},
		{"custom dim limit", dimsOfSizes(1, 1, 1), Limits{MaxDimensions: 2, MaxSKUs: 8}, ErrTooManyDimensions, "3 dimensions"},
		{"empty dimension", [][]int64{{1, 2}, {}}, DefaultLimits, ErrEmptyDimension, "dimension 1"},
		// The empty dimension is the admin's real mistake, not the size of the others.
		{"empty dimension beside a huge one", [][]int64{huge, {}}, DefaultLimits, ErrEmptyDimension, "dimension 1"},
		{"duplicate within a dimension", [][]int64{{1, 2, 1}}, DefaultLimits, ErrDuplicateValue, "value 1"},
		{"duplicate across dimensions", [][]int64{{1, 2}, {3, 2}}, DefaultLimits, ErrDuplicateValue, "value 2"},
	} {
		got, err := Cartesian(tc.dims, tc.lim)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: Cartesian error = %v, want errors.Is %v", tc.name, err, tc.want)
			continue
		}
		if got != nil {
			t.Errorf("%s: Cartesian returned %d combos with an error", tc.name, len(got))
		}
		if !strings.Contains(err.Error(), tc.detail) {
			t.Errorf("%s: Cartesian error %q does not mention %q", tc.name, err, tc.detail)
		}
	}
}

func TestCartesianLimitBoundary(t *testing.T) {
	for _, tc := range []struct {
		sizes   []int
		wantErr error
	}{
		{[]int{5, 5, 5, 4, 1, 1}, nil},                     // 6 dims, exactly 500
		{[]int{2, 2, 5, 5, 5, 1}, nil},                     // 6 dims, exactly 500
		{[]int{500, 1, 1, 1, 1, 1}, nil},                   // 6 dims, exactly 500
		{[]int{3, 167, 1, 1, 1, 1}, ErrTooManySKUs},        // 6 dims, 501
		{[]int{501, 1, 1, 1, 1, 1}, ErrTooManySKUs},        // 6 dims, 501
		{[]int{1, 1, 1, 1, 1, 1, 1}, ErrTooManyDimensions}, // 7 dims, 1 SKU
	} {
		dims := dimsOfSizes(tc.sizes...)
		got, err := Cartesian(dims, DefaultLimits)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("Cartesian(sizes %v) error = %v, want %v", tc.sizes, err, tc.wantErr)
			continue
		}
		if tc.wantErr == nil && len(got) != 500 {
			t.Errorf("len(Cartesian(sizes %v)) = %d, want 500", tc.sizes, len(got))
		}
	}
}

func TestCartesianZeroLimitsMeanDefaults(t *testing.T) {
	if _, err := Cartesian(dimsOfSizes(5, 5, 5, 4), Limits{}); err != nil {
		t.Errorf("Cartesian(500 combos, Limits{}) error %v, want nil", err)
	}
	if _, err := Cartesian(dimsOfSizes(3, 167), Limits{}); !errors.Is(err, ErrTooManySKUs) {
		t.Errorf("Cartesian(501 combos, Limits{}) error %v, want %v", err, ErrTooManySKUs)
	}
}

func TestLimitErrorsTellAdminToSplit(t *testing.T) {
	for _, err := range []error{ErrTooManyDimensions, ErrTooManySKUs} {
		if msg := err.Error(); !strings.Contains(msg, "split the goods") || !strings.Contains(msg, "请拆分商品") {
			t.Errorf("error %q does not tell the admin to split the goods", msg)
		}
	}
}

func ExampleCartesian() {
	combos, _ := Cartesian([][]int64{{12, 13}, {35, 36, 37}}, DefaultLimits)
	keys := make([]string, len(combos))
	for i, c := range combos {
		keys[i] = SpecKey(c)
	}
	fmt.Println(strings.Join(keys, " "))
	// Output: 12_35 12_36 12_37 13_35 13_36 13_37
}
