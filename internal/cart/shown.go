package cart

import "context"

// A read acknowledges a price rise (stores it as the line's seen price, so
// checkoutCart charges it) only when its answer shows the shopper the new
// price: the lines' prices, the cost or the warnings (a
// `cart(id) { id }`, or a mutation answering `{ id }`, would show nothing and
// let the next checkout charge a rise nobody saw). What the answer selects
// is the caller's to know (the GraphQL resolver reads its selection set), so
// it says so on the context of the call; a call without it acknowledges
// nothing.
type shownKey struct{}

// ShowingPrices returns ctx for a cart call whose answer shows (shown) or
// does not show the shopper the lines' current prices and warnings.
func ShowingPrices(ctx context.Context, shown bool) context.Context {
	return context.WithValue(ctx, shownKey{}, shown)
}

func pricesShown(ctx context.Context) bool {
	shown, _ := ctx.Value(shownKey{}).(bool)
	return shown
}
