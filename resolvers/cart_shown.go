package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"

	"storefront/internal/cart"
)

// showing marks ctx for the cart package with whether this field's answer
// (a Cart) shows the shopper its lines' current prices: the warnings, the
// cost's subtotal, or a line's unitPrice or subtotal. Only such an answer acknowledges
// a price rise (internal/cart/shown.go). The product views under CartLine.sku and
// .goods do not count: they are cached and may still show the old price.
func showing(ctx context.Context) context.Context {
	return cart.ShowingPrices(ctx, showsPrices(ctx))
}

func showsPrices(ctx context.Context) bool {
	if graphql.GetFieldContext(ctx) == nil {
		return false
	}
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFieldsCtx(ctx, []string{"Cart"}) {
		switch f.Name {
		case "warnings":
			return true
		case "cost":
			if selects(op, f, "CartCost", "subtotal") {
				return true
			}
		case "lines":
			if selects(op, f, "CartLine", "unitPrice", "subtotal") {
				return true
			}
		}
	}
	return false
}

// selects says whether f's selection (of type typ) has one of names.
func selects(op *graphql.OperationContext, f graphql.CollectedField, typ string, names ...string) bool {
	for _, g := range graphql.CollectFields(op, f.Selections, []string{typ}) {
		if slices.Contains(names, g.Name) {
			return true
		}
	}
	return false
}
