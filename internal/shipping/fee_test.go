package shipping

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

func m(s string) money.Money { return money.MustParse(s) }

func mp(s string) *money.Money { v := m(s); return &v }

// The templates of the table: pieces (10.00 for the first 2, 3.00 per 2
// more; Shanghai's Huangpu district, Shanghai city, Jiangsu province and
// everywhere else each cheaper than the next), weight (8.00 for the first
// 1,000 g + 2.00 per 500 g, free over 199.00, Zhejiang cheaper), and one
// that covers Beijing only.
var feeTemplates = map[int64]*Template{
	1: {ID: 1, ChargeBy: enums.ChargeByPiece, Rules: []Rule{
		{RegionCodes: []string{"*"}, FirstUnits: 2, FirstFee: m("10.00"), NextUnits: 2, NextFee: m("3.00")},
		{RegionCodes: []string{"32"}, FirstUnits: 2, FirstFee: m("8.00"), NextUnits: 2, NextFee: m("3.00")},
		{RegionCodes: []string{"3101"}, FirstUnits: 2, FirstFee: m("6.00"), NextUnits: 2, NextFee: m("3.00")},
		{RegionCodes: []string{"310101", "440305"}, FirstUnits: 2, FirstFee: m("4.00"), NextUnits: 2, NextFee: m("3.00")},
	}},
	2: {ID: 2, ChargeBy: enums.ChargeByWeight, FreeOver: mp("199.00"), Rules: []Rule{
		{RegionCodes: []string{"*"}, FirstUnits: 1000, FirstFee: m("8.00"), NextUnits: 500, NextFee: m("2.00")},
		{RegionCodes: []string{"33"}, FirstUnits: 1000, FirstFee: m("5.00"), NextUnits: 500, NextFee: m("1.00")},
	}},
	3: {ID: 3, ChargeBy: enums.ChargeByPiece, Rules: []Rule{
		{RegionCodes: []string{"11"}, FirstUnits: 1, FirstFee: m("12.00"), NextUnits: 1, NextFee: m("1.50")},
	}},
}

func TestFee(t *testing.T) {
	piece := func(q int64) Line {
		return Line{GoodsID: 10, GoodsName: "T恤", TemplateID: 1, Quantity: q, Subtotal: m("10.00") * money.Money(q)}
	}
	water := func(q, grams int64, unit string) Line {
		return Line{GoodsID: 20, GoodsName: "水杯", TemplateID: 2, Quantity: q, WeightGrams: grams, Subtotal: m(unit) * money.Money(q)}
	}
	free := Line{GoodsID: 30, GoodsName: "帆布包", Quantity: 5, Subtotal: m("195.00")}
	for _, tc := range []struct {
		name   string
		region string
		lines  []Line
		want   string // "" when the fee is refused
	}{
		// Pieces, everywhere else: 10.00 up to 2, then 3.00 per 2 or part of 2.
		{"one piece", "450102", []Line{piece(1)}, "10.00"},
		{"first units exactly", "450102", []Line{piece(2)}, "10.00"},
		{"one past the first", "450102", []Line{piece(3)}, "13.00"},
		{"a whole next step", "450102", []Line{piece(4)}, "13.00"},
		{"into the second step", "450102", []Line{piece(5)}, "16.00"},
		{"the same SKU twice adds up", "450102", []Line{piece(2), piece(3)}, "16.00"},
		// The most specific rule wins: district, city, province, everywhere.
		{"district rule", "310101", []Line{piece(1)}, "4.00"},
		{"city rule", "310104", []Line{piece(1)}, "6.00"},
		{"province rule", "320102", []Line{piece(1)}, "8.00"},
		{"another district of the same rule", "440305", []Line{piece(3)}, "7.00"},
		{"a city that is not the district's", "440306", []Line{piece(1)}, "10.00"},
		// Weight: 1,000 g for 8.00, then 2.00 per 500 g or part of it.
		{"under the first grams", "110101", []Line{water(1, 750, "39.00")}, "8.00"},
		{"first grams exactly", "110101", []Line{water(2, 500, "29.00")}, "8.00"},
		{"one gram past", "110101", []Line{water(1, 1001, "29.00")}, "10.00"},
		{"a whole step past", "110101", []Line{water(3, 500, "29.00")}, "10.00"},
		{"one gram into the next step", "110101", []Line{water(1, 1501, "29.00")}, "12.00"},
		{"a weightless SKU pays the first fee", "110101", []Line{water(1, 0, "29.00")}, "8.00"},
		{"province rule by weight", "330106", []Line{water(4, 750, "39.00")}, "9.00"},
		// Free over 199.00 of the template's lines, not of the order.
		{"one cent below free", "110101", []Line{water(1, 750, "198.99")}, "8.00"},
		{"exactly free", "110101", []Line{water(1, 750, "199.00")}, "0.00"},
		{"free over counts the template's lines only", "110101", []Line{water(1, 750, "100.00"), free}, "8.00"},
		{"two lines of one template reach it together", "110101", []Line{water(1, 500, "100.00"), water(1, 750, "99.00")}, "0.00"},
		// Several templates: the sum; lines without one ship free.
		// 13.00 (3 pieces) + 10.00 (1,500 g) + 12.00 + 2 × 1.50 (3 umbrellas).
		{"several templates", "110101", []Line{piece(3), water(2, 750, "39.00"), {GoodsID: 40, GoodsName: "伞", TemplateID: 3, Quantity: 3, Subtotal: m("30.00")}}, "38.00"},
		{"free goods alone", "110101", []Line{free}, "0.00"},
		{"no lines", "110101", nil, "0.00"},
		// No rule covers the region.
		{"template 3 outside Beijing", "310104", []Line{{GoodsID: 40, GoodsName: "伞", TemplateID: 3, Quantity: 1}}, ""},
		{"unknown template", "310104", []Line{{GoodsID: 50, GoodsName: "灯", TemplateID: 99, Quantity: 1}}, ""},
	} {
		got, err := Fee(tc.region, tc.lines, feeTemplates)
		switch {
		case tc.want == "" && !errors.Is(err, ErrUnavailable):
			t.Errorf("%s: Fee(%s) = %s, %v, want ErrUnavailable", tc.name, tc.region, got, err)
		case tc.want != "" && (err != nil || got.String() != tc.want):
			t.Errorf("%s: Fee(%s) = %s, %v, want %s", tc.name, tc.region, got, err, tc.want)
		}
	}
}

// A refusal names the goods and the region.
func TestFeeUnavailableNamesGoodsAndRegion(t *testing.T) {
	_, err := Fee("310104", []Line{{GoodsID: 40, GoodsName: "伞", TemplateID: 3, Quantity: 1}, {GoodsID: 41, GoodsName: "雨衣", TemplateID: 3, Quantity: 1}}, feeTemplates)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "伞, 雨衣") || !strings.Contains(err.Error(), "310104") {
		t.Fatalf("Fee = %v, want ErrUnavailable naming 伞, 雨衣 and 310104", err)
	}
}

// The fee is the same whatever the order of the lines.
func TestFeeIgnoresLineOrder(t *testing.T) {
	lines := []Line{
		{GoodsID: 10, GoodsName: "T恤", TemplateID: 1, Quantity: 3, Subtotal: m("30.00")},
		{GoodsID: 11, GoodsName: "袜子", TemplateID: 1, Quantity: 2, Subtotal: m("20.00")},
		{GoodsID: 20, GoodsName: "水杯", TemplateID: 2, Quantity: 2, WeightGrams: 750, Subtotal: m("78.00")},
		{GoodsID: 21, GoodsName: "水壶", TemplateID: 2, Quantity: 1, WeightGrams: 1200, Subtotal: m("59.00")},
		{GoodsID: 40, GoodsName: "伞", TemplateID: 3, Quantity: 2, Subtotal: m("20.00")},
		{GoodsID: 30, GoodsName: "帆布包", Quantity: 1, Subtotal: m("39.00")},
	}
	want, err := Fee("110105", lines, feeTemplates)
	if err != nil {
		t.Fatal(err)
	}
	// 5 pieces: 10.00 + 2 × 3.00; 2,700 g: 8.00 + 4 × 2.00; 2 pieces: 12.00 + 1.50.
	if want != m("16.00")+m("16.00")+m("13.50") {
		t.Fatalf("Fee = %s, want 45.50", want)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
		if got, err := Fee("110105", lines, feeTemplates); err != nil || got != want {
			t.Fatalf("Fee of %v = %s, %v, want %s", lines, got, err, want)
		}
	}
}

func TestRuleRegionCodes(t *testing.T) {
	// A municipality's 4 digits (3101) are its districts' though the table
	// has no city 310100; 4290 are the county-level cities Hubei governs
	// directly; 441900 is a city with no districts, so it is an address's.
	for _, c := range []string{"*", "31", "65", "3101", "6501", "4290", "310104", "650102", "441900", "810000"} {
		if err := checkRuleRegion(c); err != nil {
			t.Errorf("checkRuleRegion(%q) = %v", c, err)
		}
	}
	for _, c := range []string{"", "3", "310", "31010", "3101040", "00", "**", "31a1", " 31",
		"99", "30", "3199", "3120", "990000", "999999", "310199", "310000", "650100", "429000", "0000"} {
		if err := checkRuleRegion(c); err == nil {
			t.Errorf("checkRuleRegion(%q) accepted", c)
		}
	}
}
