package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/specvalue"
	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// shirt creates a 3 colours × 4 sizes goods with stock 10 per SKU.
func shirt(t *testing.T, cat *catalog.Service) *catalog.Goods {
	t.Helper()
	g, err := cat.Create(context.Background(), catalog.CreateInput{
		Name: "T恤", Code: "EDIT-SHIRT", Status: enums.GoodsOnShelf,
		Specs: []catalog.SpecInput{
			{Name: "颜色", Values: []string{"黑色", "白色", "藏青"}},
			{Name: "尺码", Values: []string{"S", "M", "L", "XL"}},
		},
		DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("89.00"), Stock: 10},
	})
	// Tests index into the SKU list: a short one must fail here, not panic there.
	if err != nil || g == nil || len(g.SkuList(false)) != 12 {
		t.Fatalf("creating the shirt: %v, %v", g, err)
	}
	return g
}

// form turns a goods back into the spec form an admin would submit.
func form(g *catalog.Goods) []catalog.SpecEdit {
	var out []catalog.SpecEdit
	for _, s := range g.Specs {
		e := catalog.SpecEdit{ID: &s.ID, Name: s.Name}
		for _, v := range s.Values {
			e.Values = append(e.Values, catalog.ValueEdit{ID: &v.ID, Name: v.Name})
		}
		out = append(out, e)
	}
	return out
}

type counts struct{ goods, specs, values, skus, ledger int }

func countRows(t *testing.T, db *store.DB) counts {
	t.Helper()
	c := db.Client
	return counts{
		countOf(t, "goods", c.Goods.Query()), countOf(t, "specs", c.Spec.Query()),
		countOf(t, "spec values", c.SpecValue.Query()), countOf(t, "SKUs", c.Sku.Query()),
		countOf(t, "ledger rows", c.StockLog.Query()),
	}
}

// ledgerBalances asserts stock = ledger sum for every SKU.
func ledgerBalances(t *testing.T, db *store.DB) {
	t.Helper()
	ledger, err := db.Client.StockLog.Query().All(context.Background())
	must.NoErr(t, err)
	for _, s := range skusOf(t, db, 0) {
		var sum int64
		for _, r := range ledger {
			if r.ItemID == s.ID {
				sum += r.ChangeNum
			}
		}
		if sum != s.Stock {
			t.Errorf("SKU %d (%s): stock %d, ledger sum %d", s.ID, s.SpecValueStr, s.Stock, sum)
		}
	}
}

func skuByStr(t *testing.T, db *store.DB, goodsID int64) map[string]*ent.Sku {
	t.Helper()
	out := map[string]*ent.Sku{}
	for _, s := range skusOf(t, db, goodsID) {
		out[s.SpecValueStr] = s
	}
	return out
}

func TestUpdateSpecsDiffsBySpecKey(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		before := skuByStr(t, db, g.ID)
		for _, c := range []string{"黑色", "白色", "藏青"} {
			for _, size := range []string{"S", "M", "L", "XL"} {
				if before[c+","+size] == nil {
					t.Fatalf("the shirt has no SKU %s,%s: %v", c, size, before)
				}
			}
		}
		maxValueID, err := db.Client.SpecValue.Query().Aggregate(ent.Max(specvalue.FieldID)).Int(ctx)
		must.NoErr(t, err)

		specs := form(g)
		specs[0].Values[2].Name = "海军蓝"                                          // rename 藏青
		specs[0].Values = slices.Delete(specs[0].Values, 1, 2)                   // remove 白色
		specs[0].Values = append(specs[0].Values, catalog.ValueEdit{Name: "红色"}) // add
		got, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{
			GoodsID: g.ID, ExpectedVersion: g.Version, Specs: specs,
			DefaultSku: &catalog.SkuTerms{SellPrice: money.MustParse("99.00"), Stock: 7},
			Skus: []catalog.SkuEdit{
				{Values: []string{"黑色", "L"}, SellPrice: money.MustParse("109.00"), SkuCode: new("BLK-L")},
				{Values: []string{"红色", "XL"}, SellPrice: money.MustParse("129.00"), Stock: new(int64(3))},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != g.Version+1 {
			t.Errorf("version = %d, want %d", got.Version, g.Version+1)
		}
		after := skuByStr(t, db, g.ID)
		if len(after) != 16 {
			t.Fatalf("SKUs = %d, want 12 kept + 4 new", len(after))
		}
		for _, size := range []string{"S", "M", "L", "XL"} {
			black, navy, white, red := after["黑色,"+size], after["海军蓝,"+size], after["白色,"+size], after["红色,"+size]
			if black == nil || black.ID != before["黑色,"+size].ID || black.Status != enums.SkuEnabled || black.Stock != 10 {
				t.Errorf("黑色/%s = %+v, want the same enabled SKU with its stock", size, black)
			}
			if navy == nil || navy.ID != before["藏青,"+size].ID || navy.Status != enums.SkuEnabled {
				t.Errorf("renamed 藏青/%s = %+v, want the same SKU with the new text", size, navy)
			}
			if white == nil || white.ID != before["白色,"+size].ID || white.Status != enums.SkuDisabled || white.Stock != 10 {
				t.Errorf("removed 白色/%s = %+v, want the same SKU, disabled, stock kept", size, white)
			}
			if red == nil || red.Status != enums.SkuEnabled {
				t.Fatalf("new 红色/%s = %+v", size, red)
			}
			for _, old := range before {
				if red.ID <= old.ID {
					t.Errorf("new SKU id %d is not above old id %d", red.ID, old.ID)
				}
			}
			wantStock, wantPrice := int64(7), money.MustParse("99.00")
			if size == "XL" {
				wantStock, wantPrice = 3, money.MustParse("129.00")
			}
			if red.Stock != wantStock || red.SellPrice != wantPrice {
				t.Errorf("红色/%s stock %d price %s, want %d %s", size, red.Stock, red.SellPrice, wantStock, wantPrice)
			}
		}
		if b := after["黑色,L"]; b == nil || b.SellPrice != money.MustParse("109.00") || b.SkuCode == nil || *b.SkuCode != "BLK-L" {
			t.Errorf("黑色/L terms not updated: %+v", b)
		}
		red := valueRow(t, db, "红色")
		if red.ID <= int64(maxValueID) {
			t.Errorf("new value id %d reuses the range up to %d", red.ID, maxValueID)
		}
		white := valueRow(t, db, "白色")
		if !white.Disabled {
			t.Error("removed value 白色 is not disabled")
		}
		if names := valueNames(got); !slices.Equal(names, []string{"黑色", "海军蓝", "红色", "S", "M", "L", "XL"}) {
			t.Errorf("product view values = %v", names)
		}
		if n := len(got.SkuList(false)); n != 12 {
			t.Errorf("enabled SKUs in the view = %d, want 12", n)
		}
		ledgerBalances(t, db)
	})
}

// Taking a dimension away and back to a single-spec goods keeps ids too.
func TestUpdateSpecsDimensionsAddedAndRemoved(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		specs := form(g)
		specs = append(specs[:1], catalog.SpecEdit{Name: "款式", Values: []catalog.ValueEdit{{Name: "常规"}, {Name: "加长"}}})
		g2, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g.Version, Specs: specs,
			DefaultSku: &catalog.SkuTerms{SellPrice: money.MustParse("50.00")}})
		if err != nil {
			t.Fatal(err)
		}
		if len(g2.Specs) != 2 || g2.Specs[1].Name != "款式" || len(g2.SkuList(false)) != 6 {
			t.Fatalf("after replacing 尺码 by 款式: specs %v, %d enabled SKUs", valueNames(g2), len(g2.SkuList(false)))
		}
		if n := len(skusOf(t, db, g.ID)); n != 18 {
			t.Errorf("SKUs = %d, want 12 old (disabled) + 6 new", n)
		}
		g3, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g2.Version,
			DefaultSku: &catalog.SkuTerms{SellPrice: money.MustParse("40.00"), Stock: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if g3.SpecType != enums.SpecSingle || len(g3.Specs) != 0 || len(g3.SkuList(false)) != 1 {
			t.Fatalf("single-spec goods = %+v with %d SKUs", g3, len(g3.SkuList(false)))
		}
		single := g3.SkuList(false)[0]
		// Back to colours only: the single SKU is retired, the colour SKUs are new.
		g4, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g3.Version,
			Specs:      []catalog.SpecEdit{{Name: "颜色", Values: []catalog.ValueEdit{{Name: "黑色"}}}},
			DefaultSku: &catalog.SkuTerms{SellPrice: money.MustParse("40.00")}})
		if err != nil {
			t.Fatal(err)
		}
		if s := g4.SkuList(false); len(s) != 1 || s[0].ID == single.ID {
			t.Errorf("enabled SKUs after re-adding colours = %+v", s)
		}
		// And single again: the old default SKU (same spec key "") comes back with its id.
		g5, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g4.Version})
		if err != nil {
			t.Fatal(err)
		}
		if s := g5.SkuList(false); len(s) != 1 || s[0].ID != single.ID || s[0].Stock != 1 {
			t.Errorf("back to single spec: %+v, want SKU %d again", s, single.ID)
		}
		ledgerBalances(t, db)
	})
}

func TestUpdateSpecsStaleVersionWritesNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		specs := form(g)
		specs[0].Values = append(specs[0].Values, catalog.ValueEdit{Name: "红色"})
		in := catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g.Version, Specs: specs,
			DefaultSku: &catalog.SkuTerms{SellPrice: 100}}
		if _, err := cat.UpdateSpecs(ctx, in); err != nil {
			t.Fatal(err)
		}
		before := countRows(t, db)
		specs[0].Values[3].Name = "绿色"
		if _, err := cat.UpdateSpecs(ctx, in); !errors.Is(err, errs.VersionConflict) {
			t.Fatalf("second save at the old version: err = %v, want errs.VersionConflict", err)
		}
		if after := countRows(t, db); after != before {
			t.Errorf("rows %+v -> %+v after a refused save", before, after)
		}
		if _, err := cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: 987654, ExpectedVersion: 1}); !errors.Is(err, errs.NotFound) {
			t.Errorf("unknown goods: err = %v, want errs.NotFound", err)
		}
	})
}

func TestBadEditsWriteNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		other := shirt2(t, cat)
		taken := "TAKEN-1"
		otherSku := skusOf(t, db, other.ID)[0] // shirt2 checked it has one
		must.NoErr(t, db.Client.Sku.UpdateOneID(otherSku.ID).SetSkuCode(taken).Exec(ctx))
		price := money.MustParse("10.00")
		neg := money.Money(-1)
		edit := func(f func([]catalog.SpecEdit) []catalog.SpecEdit, skus ...catalog.SkuEdit) catalog.UpdateSpecsInput {
			return catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g.Version, Specs: f(form(g)),
				DefaultSku: &catalog.SkuTerms{SellPrice: price}, Skus: skus}
		}
		addValue := func(name string) func([]catalog.SpecEdit) []catalog.SpecEdit {
			return func(s []catalog.SpecEdit) []catalog.SpecEdit {
				s[0].Values = append(s[0].Values, catalog.ValueEdit{Name: name})
				return s
			}
		}
		id := func(v int64) *int64 { return &v }
		colour := func(s []catalog.SpecEdit) *catalog.SpecEdit { return &s[0] }
		for _, tc := range []struct {
			name string
			in   catalog.UpdateSpecsInput
			want error
		}{
			{"empty value name", edit(addValue(" ")), errs.InvalidInput},
			{"empty spec name", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit { s[1].Name = ""; return s }), errs.InvalidInput},
			{"duplicate value", edit(addValue("黑色")), errs.InvalidInput},
			{"duplicate value but for spaces", edit(addValue(" 黑色 ")), errs.InvalidInput},
			{"duplicate spec", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit { s[1].Name = s[0].Name; return s }), errs.InvalidInput},
			{"negative price", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"红色", "S"}, SellPrice: -100}), errs.InvalidInput},
			{"absurd price", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"红色", "S"}, SellPrice: money.MustParse("99999999.00")}), errs.InvalidInput},
			{"negative lineation", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"红色", "S"}, SellPrice: price, LineationPrice: &neg}), errs.InvalidInput},
			{"negative opening stock", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"红色", "S"}, SellPrice: price, Stock: new(int64(-1))}), errs.InvalidInput},
			{"existing SKU's stock", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"黑色", "S"}, SellPrice: price, Stock: new(int64(99))}), errs.InvalidInput},
			{"skuCode of another goods' SKU", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"红色", "S"}, SellPrice: price, SkuCode: &taken}), errs.InvalidInput},
			{"skuCode taken by existing SKU edit", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"黑色", "S"}, SellPrice: price, SkuCode: &taken}), errs.InvalidInput},
			{"not a combination", edit(addValue("红色"), catalog.SkuEdit{Values: []string{"紫色", "S"}, SellPrice: price}), errs.InvalidInput},
			{"new combination without a price", catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g.Version, Specs: addValue("红色")(form(g))}, errs.InvalidInput},
			{"unknown spec id", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit { colour(s).ID = id(999999); return s }), errs.NotFound},
			{"unknown value id", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit { s[0].Values[0].ID = id(999999); return s }), errs.NotFound},
			{"value of another dimension", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit {
				s[0].Values[0].ID, s[1].Values = s[1].Values[0].ID, s[1].Values[1:]
				return s
			}), errs.NotFound},
			{"value of another goods", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit {
				s[0].Values[0].ID = &other.Specs[0].Values[0].ID
				return s
			}), errs.NotFound},
			{"too many SKUs", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit {
				for i := range 200 {
					s[1].Values = append(s[1].Values, catalog.ValueEdit{Name: fmt.Sprint("size", i)})
				}
				return s
			}), skumatrix.ErrTooManySKUs},
			{"empty dimension", edit(func(s []catalog.SpecEdit) []catalog.SpecEdit { s[1].Values = nil; return s }), skumatrix.ErrEmptyDimension},
		} {
			before := countRows(t, db)
			_, err := cat.UpdateSpecs(ctx, tc.in)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("%s: rows %+v -> %+v", tc.name, before, after)
			}
			if v := goodsRow(t, db, g.ID).Version; v != g.Version {
				t.Errorf("%s: goods version %d -> %d", tc.name, g.Version, v)
			}
		}
	})
}

func TestBadCreateWritesNothing(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		taken := "TAKEN-2"
		g := shirt(t, cat)
		must.NoErr(t, db.Client.Sku.Update().Where(sku.GoodsID(g.ID), sku.SpecValueStr("黑色,S")).SetSkuCode(taken).Exec(ctx))
		ok := func() catalog.CreateInput {
			return catalog.CreateInput{Name: "袜子", Status: enums.GoodsOnShelf,
				Specs:      []catalog.SpecInput{{Name: "颜色", Values: []string{"黑", "白"}}},
				DefaultSku: catalog.SkuTerms{SellPrice: 1000, Stock: 5}}
		}
		long := ""
		for range 30 {
			long += "长"
		}
		for name, mod := range map[string]func(*catalog.CreateInput){
			"empty name":               func(in *catalog.CreateInput) { in.Name = "" },
			"duplicate value":          func(in *catalog.CreateInput) { in.Specs[0].Values = []string{"黑", "黑"} },
			"duplicate but for spaces": func(in *catalog.CreateInput) { in.Specs[0].Values = []string{"黑", "黑 "} },
			"duplicate spec":           func(in *catalog.CreateInput) { in.Specs = append(in.Specs, in.Specs[0]) },
			"negative stock":           func(in *catalog.CreateInput) { in.DefaultSku.Stock = -1 },
			"negative cost":            func(in *catalog.CreateInput) { in.DefaultSku.CostPrice = -1 },
			"value name of 90 bytes":   func(in *catalog.CreateInput) { in.Specs[0].Values[0] = long },
			"skuCode taken": func(in *catalog.CreateInput) {
				in.Skus = []catalog.SkuOverride{{Values: []string{"黑"}, SkuCode: &taken}}
			},
			"override not in product": func(in *catalog.CreateInput) { in.Skus = []catalog.SkuOverride{{Values: []string{"红"}}} },
		} {
			in := ok()
			mod(&in)
			before := countRows(t, db)
			if _, err := cat.Create(ctx, in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: err = %v, want errs.InvalidInput", name, err)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("%s: rows %+v -> %+v", name, before, after)
			}
		}
		if _, err := cat.Create(ctx, ok()); err != nil {
			t.Errorf("the valid input fails: %v", err)
		}
	})
}

func shirt2(t *testing.T, cat *catalog.Service) *catalog.Goods {
	t.Helper()
	g, err := cat.Create(context.Background(), catalog.CreateInput{Name: "另一件", Status: enums.GoodsOnShelf,
		Specs:      []catalog.SpecInput{{Name: "颜色", Values: []string{"灰色"}}},
		DefaultSku: catalog.SkuTerms{SellPrice: 100, Stock: 1}})
	if err != nil || g == nil || len(g.SkuList(false)) != 1 {
		t.Fatalf("creating the second goods: %v, %v", g, err)
	}
	return g
}

// valueRow is the one spec value of that name in the database.
func valueRow(t *testing.T, db *store.DB, name string) *ent.SpecValue {
	t.Helper()
	v, err := db.Client.SpecValue.Query().Where(specvalue.Name(name)).Only(context.Background())
	if err != nil {
		t.Fatalf("spec value %q: %v", name, err)
	}
	return v
}

func valueNames(g *catalog.Goods) []string {
	var out []string
	for _, s := range g.Specs {
		for _, v := range s.Values {
			out = append(out, v.Name)
		}
	}
	return out
}
