package catalog

import (
	"fmt"
	"storefront/internal/vocab/errs"
	"strings"
)

// valueSeparator joins a SKU's value names into its spec_value_str
// ("黑色,L"), the text order lines keep as their snapshot. A value name
// containing it would let two SKUs share one text ({"a,b", "a"} × {"x", "b,x"}
// both read "a,b,x"), so such names are refused rather than escaped: the
// stored text and every old order line stay plain and readable. Spec names
// are not part of the text and may contain it.
const valueSeparator = ","

// checkValueName is checkName for spec values plus the separator rule; every
// form that names values goes through it.
func checkValueName(v string) error {
	if err := checkName("spec value", v, 64); err != nil {
		return err
	}
	if strings.Contains(v, valueSeparator) {
		return fmt.Errorf("%w: spec value %q contains %q, which separates values in a SKU's text; use another character (such as / or ，)", errs.InvalidInput, v, valueSeparator)
	}
	return nil
}

// Names are trimmed before any check: "黑色 " and "黑色" are one value to a
// shopper, so they must be one value to the duplicate checks, the spec-key
// lookup of overrides and the database. The caller's slices are not touched.

func (in CreateInput) trimmed() CreateInput {
	in.Name, in.Code = strings.TrimSpace(in.Name), strings.TrimSpace(in.Code)
	specs := make([]SpecInput, len(in.Specs))
	for i, sp := range in.Specs {
		specs[i] = SpecInput{Name: strings.TrimSpace(sp.Name), Values: trimAll(sp.Values)}
	}
	in.Specs = specs
	skus := make([]SkuOverride, len(in.Skus))
	for i, o := range in.Skus {
		o.Values = trimAll(o.Values)
		skus[i] = o
	}
	in.Skus = skus
	return in
}

func (in UpdateSpecsInput) trimmed() UpdateSpecsInput {
	specs := make([]SpecEdit, len(in.Specs))
	for i, sp := range in.Specs {
		values := make([]ValueEdit, len(sp.Values))
		for j, v := range sp.Values {
			values[j] = ValueEdit{ID: v.ID, Name: strings.TrimSpace(v.Name)}
		}
		specs[i] = SpecEdit{ID: sp.ID, Name: strings.TrimSpace(sp.Name), Values: values}
	}
	in.Specs = specs
	skus := make([]SkuEdit, len(in.Skus))
	for i, e := range in.Skus {
		e.Values = trimAll(e.Values)
		skus[i] = e
	}
	in.Skus = skus
	return in
}

func trimAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSpace(n)
	}
	return out
}
