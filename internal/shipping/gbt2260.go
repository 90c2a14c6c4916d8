package shipping

import (
	_ "embed"
	"strings"
	"sync"
)

// gbt2260 is the table of administrative division codes (GB/T 2260, the
// Ministry of Civil Affairs' 县级以上行政区划代码): one "code name" line per
// province, prefecture-level city and county-level division, sorted.
// scripts/gbt2260.sh writes it; docs/shipping.md says its source and date.
//
//go:embed gbt2260.txt
var gbt2260 string

// Region is an address's place as its regionCode names it.
type Region struct {
	Code     string
	Province string
	City     string
	District string
}

// regionTable is gbt2260 read once: each code's name (a substring of the
// embedded text, nothing copied) and the codes with divisions under them.
type regionTable struct {
	names map[int32]string
	// parents are the province and city codes that have a division under
	// them; cities are the 4-digit prefixes of every code (a city's, and
	// a municipality's districts' 1101 without a city entry of its own).
	parents map[int32]bool
	cities  map[int32]bool
}

// regions is the table, read on first use.
var regions = sync.OnceValue(readRegions)

func readRegions() *regionTable {
	t := &regionTable{names: make(map[int32]string, 3300), parents: make(map[int32]bool, 400), cities: make(map[int32]bool, 400)}
	for line := range strings.Lines(gbt2260) {
		line = strings.TrimSuffix(line, "\n")
		if line == "" || line[0] == '#' {
			continue
		}
		c, ok := code6(line[:6])
		if !ok || len(line) < 8 || line[6] != ' ' {
			panic("shipping: gbt2260.txt: bad line " + line)
		}
		t.names[c] = line[7:]
		t.cities[c/100] = true
		if c%10000 != 0 {
			t.parents[c/10000*10000] = true
		}
		if c%100 != 0 {
			t.parents[c/100*100] = true
		}
	}
	return t
}

// code6 reads six ASCII digits, the first not 0, without allocating.
func code6(s string) (int32, bool) {
	if len(s) != 6 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var c int32
	for i := 0; i < 6; i++ {
		d := s[i] - '0'
		if d > 9 {
			return 0, false
		}
		c = c*10 + int32(d)
	}
	return c, true
}

// LookupRegion is the place an address's regionCode names, and whether it
// is one: a code of the table with no division under it. That is a
// county-level division (310104 徐汇区), or a prefecture-level city or
// province-level region that the table divides no further (441900 东莞市,
// 810000 香港特别行政区). Its names come from the table: the province; the
// city, or the province's name for a municipality's district (北京市) and
// the district's own for a county-level city a province governs directly
// (429004 仙桃市); and the district, or the city's name where the city is
// the finest code.
func LookupRegion(code string) (Region, bool) {
	t := regions()
	c, ok := code6(code)
	if !ok {
		return Region{}, false
	}
	name, ok := t.names[c]
	if !ok || t.parents[c] {
		return Region{}, false
	}
	r := Region{Code: code, Province: t.names[c/10000*10000], District: name}
	switch city, ok := t.names[c/100*100]; {
	case ok && c/100*100 != c/10000*10000:
		r.City = city
	case c/100%100 == 90:
		r.City = name
	default:
		r.City = r.Province
	}
	return r, true
}

// ruleRegion tells whether code, a freight rule's region, names a real
// place: "*", a province's 2 digits, a city's 4 (the first 4 of some code
// of the table), or an address's 6 (LookupRegion).
func ruleRegion(code string) bool {
	switch len(code) {
	case 1:
		return code == "*"
	case 2, 4:
		c, ok := code6(code + "0000"[:6-len(code)])
		if !ok {
			return false
		}
		if len(code) == 2 {
			_, ok = regions().names[c]
			return ok
		}
		return regions().cities[c/100]
	case 6:
		_, ok := LookupRegion(code)
		return ok
	}
	return false
}
