package shipping

import (
	"context"
	"errors"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

func TestTemplates(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db)
		free := money.MustParse("99.00")
		in := TemplateInput{Name: " 按件 ", ChargeBy: enums.ChargeByPiece, FreeOver: &free, Rules: []Rule{
			{RegionCodes: []string{"*"}, FirstUnits: 1, FirstFee: money.MustParse("10.00"), NextUnits: 1, NextFee: money.MustParse("2.00")},
			{RegionCodes: []string{"31", "3201", "440305"}, FirstUnits: 2, FirstFee: money.MustParse("6.00"), NextUnits: 3, NextFee: money.MustParse("1.00")},
		}}
		tp, err := s.CreateTemplate(ctx, in)
		if err != nil || tp.Name != "按件" || tp.Version != 1 || len(tp.Rules) != 2 || *tp.FreeOver != free || tp.Rules[1].RegionCodes[2] != "440305" {
			t.Fatalf("create: %+v, %v", tp, err)
		}
		in.ChargeBy, in.FreeOver = enums.ChargeByWeight, nil
		in.Rules = in.Rules[:1]
		up, err := s.UpdateTemplate(ctx, tp.ID, in)
		if err != nil || up.Version != 2 || up.ChargeBy != enums.ChargeByWeight || up.FreeOver != nil || len(up.Rules) != 1 {
			t.Errorf("update: %+v, %v", up, err)
		}
		if _, err := s.UpdateTemplate(ctx, tp.ID+100, in); !errors.Is(err, errs.NotFound) {
			t.Errorf("update of an unknown template: %v", err)
		}
		read, err := ReadTemplates(ctx, db.Client, []int64{tp.ID, tp.ID + 100})
		if err != nil || len(read) != 1 || read[tp.ID].Rules[0].FirstFee != money.MustParse("10.00") || read[tp.ID].ChargeBy != enums.ChargeByWeight {
			t.Errorf("ReadTemplates: %+v, %v", read, err)
		}
		all, err := s.Templates(ctx)
		if err != nil || len(all) != 1 || all[0].Version != 2 {
			t.Errorf("Templates: %+v, %v", all, err)
		}
		ok := Rule{RegionCodes: []string{"*"}, FirstUnits: 1, FirstFee: 100, NextUnits: 1, NextFee: 100}
		for _, tc := range []struct {
			name string
			edit func(*TemplateInput)
		}{
			{"no name", func(in *TemplateInput) { in.Name = "" }},
			{"an unknown unit", func(in *TemplateInput) { in.ChargeBy = "VOLUME" }},
			{"no rules", func(in *TemplateInput) { in.Rules = nil }},
			{"too many rules", func(in *TemplateInput) { in.Rules = make([]Rule, MaxRules+1) }},
			{"no regions", func(in *TemplateInput) { in.Rules[0].RegionCodes = nil }},
			{"a 3-digit region", func(in *TemplateInput) { in.Rules[0].RegionCodes = []string{"310"} }},
			{"a region in two rules", func(in *TemplateInput) {
				r := ok
				r.RegionCodes = []string{"31", "*"}
				in.Rules = append(in.Rules, r)
			}},
			{"firstUnits 0", func(in *TemplateInput) { in.Rules[0].FirstUnits = 0 }},
			{"nextUnits 0", func(in *TemplateInput) { in.Rules[0].NextUnits = 0 }},
			{"a negative fee", func(in *TemplateInput) { in.Rules[0].NextFee = -1 }},
			{"a fee over the maximum", func(in *TemplateInput) { in.Rules[0].FirstFee = MaxFee + 1 }},
			{"freeOver 0", func(in *TemplateInput) { z := money.Money(0); in.FreeOver = &z }},
		} {
			in := TemplateInput{Name: "x", ChargeBy: enums.ChargeByPiece, Rules: []Rule{ok}}
			in.Rules[0].RegionCodes = []string{"*"}
			tc.edit(&in)
			if _, err := s.CreateTemplate(ctx, in); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: %v, want INVALID_INPUT", tc.name, err)
			}
		}
		if all, _ := s.Templates(ctx); len(all) != 1 {
			t.Errorf("refused templates were written: %d", len(all))
		}
	})
}
