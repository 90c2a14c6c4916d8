package resolvers_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"storefront/ent/sku"
	"storefront/internal/app"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/money"
)

// A cart read or a cart mutation acknowledges a price rise (checkoutCart
// then charges it) only when its answer shows the new price: the warnings,
// cost.subtotal, or a line's unitPrice or subtotal, through fragments too.
// One that selects `{ id }` or only quantities shows nothing, and
// checkoutCart still answers PRICE_CHANGED (issue 25 review: `cart(id) {
// id }` let a 999.00 price be charged unseen).
func TestCartAcknowledgesOnlyShownPrices(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		signer, err := auth.NewSigner("cart-ack-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Nanosecond
		cfg.Cart = cart.DefaultConfig()
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		cat, h := sf.Catalog, sf.Handler()
		ids, err := demo.Seed(ctx, cat)
		if err != nil {
			t.Fatal(err)
		}
		var skus []int64
		for _, spec := range []string{"黑色,L", "白色,M"} { // in stock in the seed
			id, err := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.SpecValueStr(spec)).OnlyID(ctx)
			if err != nil {
				t.Fatalf("SKU %s: %v", spec, err)
			}
			skus = append(skus, id)
		}
		do := func(token, query string, vars map[string]any) gqltest.Answer {
			t.Helper()
			return gqltest.Do(t, h, token, query, vars)
		}
		raise := func(id int64) {
			t.Helper()
			k, err := db.Client.Sku.Get(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			p := k.SellPrice + money.MustParse("100.00")
			if _, err := cat.UpdateSku(ctx, catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: k.Version, SellPrice: &p}); err != nil {
				t.Fatal(err)
			}
		}
		a, b := strconv.FormatInt(skus[0], 10), strconv.FormatInt(skus[1], 10)
		const add = `mutation($c: ID!, $i: ID!) { cartLinesAdd(cartId: $c, lines: [{itemId: $i, quantity: 1}]) `
		for i, tc := range []struct {
			name, query string
			shown       bool
		}{
			{"cart { id }", `query($c: ID!) { cart(id: $c) { id } }`, false},
			{"cart without prices", `query($c: ID!) { cart(id: $c) { id status updatedAt lines { id quantity } cost { totalQuantity } } }`, false},
			{"cart { warnings }", `query($c: ID!) { cart(id: $c) { warnings { code } } }`, true},
			{"cart { lines { unitPrice } }", `query($c: ID!) { cart(id: $c) { lines { unitPrice } } }`, true},
			{"cart { lines { subtotal } } by a fragment", `query($c: ID!) { cart(id: $c) { lines { ...L } } } fragment L on CartLine { subtotal }`, true},
			{"cart { cost { subtotal } } by a fragment", `query($c: ID!) { cart(id: $c) { ...C } } fragment C on Cart { cost { subtotal } }`, true},
			{"cartLinesAdd { id }", add + `{ id } }`, false},
			{"cartLinesAdd { id warnings }", add + `{ id warnings { code message } } }`, true},
		} {
			token, _ := signer.Issue("buyer-"+strconv.Itoa(i), auth.Customer, time.Hour)
			var made struct{ CartCreate struct{ ID string } }
			r := do(token, `mutation($i: ID!) { cartCreate(input: {lines: [{itemId: $i, quantity: 1}]}) { id } }`, map[string]any{"i": a})
			if r.Code() != "" || json.Unmarshal(r.Data["cartCreate"], &made.CartCreate) != nil {
				t.Fatalf("%s: cartCreate: %+v", tc.name, r.Errors)
			}
			id := made.CartCreate.ID
			raise(skus[0])
			if r := do(token, tc.query, map[string]any{"c": id, "i": b}); r.Code() != "" {
				t.Fatalf("%s: %+v", tc.name, r.Errors)
			}
			got := do(token, `mutation($c: ID!) { checkoutCart(cartId: $c) { orderSn } }`, map[string]any{"c": id}).Code()
			switch {
			case tc.shown && got != "":
				t.Errorf("%s showed the rise, then checkoutCart: %s, want the order", tc.name, got)
			case !tc.shown && got != "PRICE_CHANGED":
				t.Errorf("%s showed no price, then checkoutCart: %q, want PRICE_CHANGED", tc.name, got)
			}
		}
	})
}
