package resolvers_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A coupon with a code is claimed by its code only: the anonymous product
// page lists only the coupons without one, and claiming a coded coupon by
// its id is NOT_FOUND, as an id that does not exist, and claims nothing.
func TestCouponCodesOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		signer, err := auth.NewSigner("promo-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, app.DefaultConfig())
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		bob, _ := signer.Issue("bob", auth.Customer, time.Hour)
		g, err := sf.Catalog.Create(ctx, catalog.CreateInput{Name: "耳机", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 19900, Stock: 10}})
		if err != nil {
			t.Fatal(err)
		}
		goods := strconv.FormatInt(g.ID, 10)
		create := func(code any) string {
			t.Helper()
			a := gqltest.Do(t, h, admin, `mutation($goods: ID!, $code: String) { createCoupon(input: {name: "30 off", kind: AMOUNT_OFF,
				amountOff: "30.00", goodsIds: [$goods], code: $code}) { id code } }`, map[string]any{"goods": goods, "code": code})
			var out struct{ ID string }
			if a.Code() != "" || json.Unmarshal(a.Data["createCoupon"], &out) != nil {
				t.Fatalf("createCoupon: %+v", a)
			}
			return out.ID
		}
		open, secret := create(nil), create("SECRET-CODE-1")

		a := gqltest.Do(t, h, "", `query($id: ID!) { goods(id: $id) { coupons { id code } } }`, map[string]any{"id": goods})
		var page struct{ Coupons []struct{ ID, Code *string } }
		if a.Code() != "" || json.Unmarshal(a.Data["goods"], &page) != nil {
			t.Fatalf("product page: %+v", a)
		}
		if len(page.Coupons) != 1 || *page.Coupons[0].ID != open {
			t.Errorf("the anonymous product page lists %d coupons (%+v), want only %s (the one without a code)", len(page.Coupons), page.Coupons, open)
		}

		claim := `mutation($id: ID, $code: String) { claimCoupon(couponId: $id, code: $code) { id coupon { id } } }`
		if a := gqltest.Do(t, h, bob, claim, map[string]any{"id": secret}); a.Code() != "NOT_FOUND" {
			t.Errorf("claiming the coded coupon %s by its id: %+v, want NOT_FOUND", secret, a)
		}
		if n, err := db.Client.UserCoupon.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d user coupons after the refused claim (%v), want 0", n, err)
		}
		if a := gqltest.Do(t, h, bob, claim, map[string]any{"code": "SECRET-CODE-1"}); a.Code() != "" {
			t.Errorf("claiming by the code: %+v", a)
		}
		if a := gqltest.Do(t, h, bob, claim, map[string]any{"id": open}); a.Code() != "" {
			t.Errorf("claiming the coupon without a code by its id: %+v", a)
		}
		if a := gqltest.Do(t, h, bob, claim, map[string]any{"code": "NO-SUCH-CODE"}); a.Code() != "NOT_FOUND" {
			t.Errorf("an unknown code: %+v, want NOT_FOUND", a)
		}
	})
}
