package catalog

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/shippingtemplate"
	"storefront/internal/vocab/errs"
)

// A goods' freight template and its SKUs' weights are catalog terms like
// its name and prices: written here, read by checkout and
// shipping when an order is priced. The templates are shipping's.

// MaxWeightGrams bounds a SKU's weight: 1,000 kg.
const MaxWeightGrams = 1_000_000

func checkWeight(g int64) error {
	if g < 0 || g > MaxWeightGrams {
		return fmt.Errorf("%w: weightGrams %d must be between 0 and %d", errs.InvalidInput, g, MaxWeightGrams)
	}
	return nil
}

// checkTemplate refuses a freight template that does not exist.
func checkTemplate(ctx context.Context, tx *ent.Tx, id *int64) error {
	if id == nil {
		return nil
	}
	ok, err := tx.ShippingTemplate.Query().Where(shippingtemplate.ID(*id)).Exist(ctx)
	if err != nil {
		return fmt.Errorf("checking freight template %d: %w", *id, err)
	}
	if !ok {
		return fmt.Errorf("%w: no freight template %d", errs.NotFound, *id)
	}
	return nil
}

// shipUnder sets the goods' template in an edit: id, none (clear), or
// unchanged.
func shipUnder(u *ent.GoodsUpdate, id *int64, clear bool) {
	switch {
	case id != nil:
		u.SetShippingTemplateID(*id)
	case clear:
		u.ClearShippingTemplateID()
	}
}
