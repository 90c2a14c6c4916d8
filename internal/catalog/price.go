package catalog

import (
	"fmt"
	"strings"

	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// checkSellPrice refuses a sell price of 0.00 or less: a forgotten price must
// not become a free product. It stands apart from checkTerms' range checks
// because the sell price is the one term where zero is never "not set"
// (a lineation or cost price of 0.00 may well mean that).
func checkSellPrice(sku string, p money.Money) error {
	if p <= 0 {
		return fmt.Errorf("%w: %s needs a sell price above 0.00, not %s", errs.InvalidInput, sku, p)
	}
	return nil
}

// skuLabel names a combination in an admin's error message.
func skuLabel(names []string) string {
	if len(names) == 0 {
		return "the default SKU"
	}
	return "SKU " + strings.Join(names, "/")
}
