package shipping

import (
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/schema"
	"storefront/ent/shippingtemplate"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// TemplateInput is a freight template as an admin writes it (whole: an
// update replaces every rule).
type TemplateInput struct {
	Name     string
	ChargeBy enums.ChargeBy
	Rules    []Rule
	FreeOver *money.Money
}

// check validates in: a name, a known unit, 1 to MaxRules rules whose
// region codes are well formed and each in one rule only (so the most
// specific match is one rule), units and fees in range.
func (in TemplateInput) check() (TemplateInput, error) {
	var err error
	if in.Name, err = text("name", in.Name, 60); err != nil {
		return in, err
	}
	if !slices.Contains(in.ChargeBy.Values(), string(in.ChargeBy)) {
		return in, fmt.Errorf("%w: chargeBy %q", errs.InvalidInput, in.ChargeBy)
	}
	if len(in.Rules) == 0 || len(in.Rules) > MaxRules {
		return in, fmt.Errorf("%w: a template has 1 to %d rules", errs.InvalidInput, MaxRules)
	}
	seen := map[string]int{}
	for i, r := range in.Rules {
		n := i + 1
		if len(r.RegionCodes) == 0 || len(r.RegionCodes) > MaxRuleRegions {
			return in, fmt.Errorf("%w: rule %d: 1 to %d region codes", errs.InvalidInput, n, MaxRuleRegions)
		}
		for _, c := range r.RegionCodes {
			if err := checkRuleRegion(c); err != nil {
				return in, fmt.Errorf("rule %d: %w", n, err)
			}
			if j, dup := seen[c]; dup {
				return in, fmt.Errorf("%w: region code %q is in rules %d and %d: each region in one rule", errs.InvalidInput, c, j, n)
			}
			seen[c] = n
		}
		if r.FirstUnits < 1 || r.FirstUnits > MaxUnits || r.NextUnits < 1 || r.NextUnits > MaxUnits {
			return in, fmt.Errorf("%w: rule %d: firstUnits and nextUnits from 1 to %d", errs.InvalidInput, n, MaxUnits)
		}
		if r.FirstFee < 0 || r.FirstFee > MaxFee || r.NextFee < 0 || r.NextFee > MaxFee {
			return in, fmt.Errorf("%w: rule %d: fees from 0.00 to %s", errs.InvalidInput, n, MaxFee)
		}
	}
	if in.FreeOver != nil && (*in.FreeOver <= 0 || *in.FreeOver > MaxFreeOver) {
		return in, fmt.Errorf("%w: freeOver from 0.01 to %s, or null", errs.InvalidInput, MaxFreeOver)
	}
	return in, nil
}

// MaxFreeOver bounds a template's freeOver: 10,000,000.00.
const MaxFreeOver = money.Money(1_000_000_000)

// Templates returns every freight template, oldest first.
func (s *Service) Templates(ctx context.Context) ([]*Template, error) {
	rows, err := s.db.Client.ShippingTemplate.Query().Order(shippingtemplate.ByID()).Limit(MaxTemplates).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading freight templates: %w", err))
	}
	out := make([]*Template, len(rows))
	for i, r := range rows {
		out[i] = templateOf(r)
	}
	return out, nil
}

// CreateTemplate adds a freight template; at most MaxTemplates exist.
func (s *Service) CreateTemplate(ctx context.Context, in TemplateInput) (*Template, error) {
	in, err := in.check()
	if err != nil {
		return nil, err
	}
	var row *ent.ShippingTemplate
	err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		n, err := tx.ShippingTemplate.Query().Count(ctx)
		if err != nil {
			return err
		}
		if n >= MaxTemplates {
			return fmt.Errorf("%w: at most %d freight templates; edit one instead", errs.InvalidInput, MaxTemplates)
		}
		now := s.now()
		row, err = tx.ShippingTemplate.Create().SetName(in.Name).SetChargeBy(in.ChargeBy).SetRules(stored(in.Rules)).
			SetNillableFreeOver(in.FreeOver).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return templateOf(row), nil
}

// UpdateTemplate replaces template id with in. Orders placed before keep
// the fee they were placed with; the next order is charged by in.
func (s *Service) UpdateTemplate(ctx context.Context, id int64, in TemplateInput) (*Template, error) {
	in, err := in.check()
	if err != nil {
		return nil, err
	}
	u := s.db.Client.ShippingTemplate.Update().Where(shippingtemplate.ID(id)).SetName(in.Name).SetChargeBy(in.ChargeBy).
		SetRules(stored(in.Rules)).SetUpdatedAt(s.now()).AddVersion(1)
	if in.FreeOver != nil {
		u.SetFreeOver(*in.FreeOver)
	} else {
		u.ClearFreeOver()
	}
	n, err := u.Save(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("updating freight template %d: %w", id, err))
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no freight template %d", errs.NotFound, id)
	}
	row, err := s.db.Client.ShippingTemplate.Get(ctx, id)
	if err != nil {
		return nil, store.Classify(err)
	}
	return templateOf(row), nil
}

func stored(rules []Rule) []schema.TemplateRule {
	out := make([]schema.TemplateRule, len(rules))
	for i, r := range rules {
		out[i] = schema.TemplateRule{RegionCodes: r.RegionCodes, FirstUnits: r.FirstUnits, FirstFee: r.FirstFee, NextUnits: r.NextUnits, NextFee: r.NextFee}
	}
	return out
}

func rulesOf(rules []schema.TemplateRule) []Rule {
	out := make([]Rule, len(rules))
	for i, r := range rules {
		out[i] = Rule{RegionCodes: r.RegionCodes, FirstUnits: r.FirstUnits, FirstFee: r.FirstFee, NextUnits: r.NextUnits, NextFee: r.NextFee}
	}
	return out
}

func templateOf(r *ent.ShippingTemplate) *Template {
	return &Template{ID: r.ID, Name: r.Name, ChargeBy: r.ChargeBy, Rules: rulesOf(r.Rules), FreeOver: r.FreeOver,
		Version: r.Version, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}
