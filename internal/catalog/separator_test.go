package catalog_test

import (
	"context"
	"errors"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// specValueStr joins value names with ",", and order lines keep that text:
// {"a,b", "a"} × {"x", "b,x"} would give two SKUs the one text "a,b,x". A
// comma in a value name is refused wherever a form names values.
func TestValueNamesRefuseSeparator(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		price := catalog.SkuTerms{SellPrice: money.MustParse("10.00"), Stock: 1}
		for _, tc := range []struct {
			name  string
			specs []catalog.SpecInput
		}{
			{"two SKUs with one text", []catalog.SpecInput{{Name: "颜色", Values: []string{"a,b", "a"}}, {Name: "尺码", Values: []string{"x", "b,x"}}}},
			{"a comma left after trimming", []catalog.SpecInput{{Name: "颜色", Values: []string{" 黑, "}}}},
		} {
			before := countRows(t, db)
			in := catalog.CreateInput{Name: "袜子", Status: enums.GoodsOnShelf, Specs: tc.specs, DefaultSku: price}
			if _, err := cat.Create(ctx, in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("create, %s: err = %v, want errs.InvalidInput", tc.name, err)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("create, %s: rows %+v -> %+v", tc.name, before, after)
			}
		}

		g := shirt(t, cat)
		for _, tc := range []struct {
			name string
			edit func([]catalog.SpecEdit) []catalog.SpecEdit
		}{
			{"renaming a value", func(s []catalog.SpecEdit) []catalog.SpecEdit { s[0].Values[0].Name = "黑,白"; return s }},
			{"adding a value", func(s []catalog.SpecEdit) []catalog.SpecEdit {
				s[1].Values = append(s[1].Values, catalog.ValueEdit{Name: "XL,XXL"})
				return s
			}},
			{"a new spec", func(s []catalog.SpecEdit) []catalog.SpecEdit {
				return append(s, catalog.SpecEdit{Name: "款式", Values: []catalog.ValueEdit{{Name: "常规,加长"}}})
			}},
		} {
			// The current version, so that one case's wrong write does not turn
			// the next cases into version conflicts.
			version := goodsRow(t, db, g.ID).Version
			before := countRows(t, db)
			in := catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: version, Specs: tc.edit(form(g)), DefaultSku: &price}
			if _, err := cat.UpdateSpecs(ctx, in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("edit, %s: err = %v, want errs.InvalidInput", tc.name, err)
			}
			if after := countRows(t, db); after != before {
				t.Errorf("edit, %s: rows %+v -> %+v", tc.name, before, after)
			}
			if v := goodsRow(t, db, g.ID).Version; v != version {
				t.Errorf("edit, %s: goods version %d -> %d", tc.name, version, v)
			}
		}
		// Spec names are not part of the text; a full-width comma is another character.
		if _, err := cat.Create(ctx, catalog.CreateInput{Name: "帽子", Status: enums.GoodsOnShelf, DefaultSku: price,
			Specs: []catalog.SpecInput{{Name: "颜色,款式", Values: []string{"黑，白"}}}}); err != nil {
			t.Errorf("a comma in a spec name or a full-width comma in a value: %v", err)
		}
	})
}
