package skumatrix

import (
	"math"
	"slices"
	"testing"
)

func TestSpecKey(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want string
	}{
		{nil, ""},
		{[]int64{}, ""},
		{[]int64{7}, "7"},
		{[]int64{12, 35}, "12_35"},
		{[]int64{35, 12}, "12_35"},
		// Numeric, not lexicographic: "100" sorts before "9" as a string.
		{[]int64{100, 9}, "9_100"},
		{[]int64{3, 1, 2}, "1_2_3"},
		{[]int64{2, 3, 1}, "1_2_3"},
		{[]int64{5, 5}, "5_5"},
		{[]int64{-1, math.MaxInt64, math.MinInt64}, "-9223372036854775808_-1_9223372036854775807"},
	} {
		in := slices.Clone(tc.in)
		if got := SpecKey(tc.in); got != tc.want {
			t.Errorf("SpecKey(%v) = %q, want %q", tc.in, got, tc.want)
		}
		if !slices.Equal(in, tc.in) {
			t.Errorf("SpecKey(%v) reordered its argument to %v", in, tc.in)
		}
	}
}

func TestParseSpecKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int64
	}{
		{"", nil},
		{"7", []int64{7}},
		{"12_35", []int64{12, 35}},
		{"9_100", []int64{9, 100}},
		{"5_5", []int64{5, 5}},
		{"0", []int64{0}},
		{"-9223372036854775808_-1_9223372036854775807", []int64{math.MinInt64, -1, math.MaxInt64}},
	} {
		got, err := parseSpecKey(tc.in)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("parseSpecKey(%q) = %v, %v, want %v, nil", tc.in, got, err, tc.want)
			continue
		}
		if back := SpecKey(got); back != tc.in {
			t.Errorf("SpecKey(parseSpecKey(%q)) = %q, want the input back", tc.in, back)
		}
	}
}

func TestParseSpecKeyMalformed(t *testing.T) {
	for _, in := range []string{
		"_",
		"_1",
		"1_",
		"1__2",
		"a",
		"1_b",
		"1,2",
		" 1",
		"1 ",
		"+1",
		"01",
		"-0",
		"35_12",                // not normalised: the same SKU would get two keys
		"9223372036854775808",  // overflows int64
		"-9223372036854775809", // underflows int64
		"1.5",
		"0x10",
	} {
		if got, err := parseSpecKey(in); err == nil {
			t.Errorf("parseSpecKey(%q) = %v, nil, want an error", in, got)
		}
	}
}
