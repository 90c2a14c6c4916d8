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
	"storefront/internal/promo"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// A purchase limit set during a sale counts what customers already hold:
// 3 single-unit orders while the goods has none, then purchaseLimit 2 →
// the next order is PURCHASE_LIMIT_EXCEEDED; cleared, 2 more pass; set
// again, refused; cancelling down to 1 standing lets exactly 1 more
// through. Another customer gets their 2. Reconcile agrees throughout.
func TestPurchaseLimitSetDuringASale(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		signer, err := auth.NewSigner("limit-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, app.DefaultConfig())
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		bob, _ := signer.Issue("bob", auth.Customer, time.Hour)
		carol, _ := signer.Issue("carol", auth.Customer, time.Hour)
		g, err := sf.Catalog.Create(ctx, catalog.CreateInput{Name: "限购耳机", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 19900, Stock: 100}})
		if err != nil {
			t.Fatal(err)
		}
		goods, item := strconv.FormatInt(g.ID, 10), strconv.FormatInt(g.SkuList(false)[0].ID, 10)
		keys := 0
		place := func(token string) (string, string) {
			t.Helper()
			keys++
			a := gqltest.Do(t, h, token, `mutation($item: ID!, $key: String) { placeOrder(input: {items: [{itemId: $item, quantity: 1}]}, idempotencyKey: $key) { orderSn } }`,
				map[string]any{"item": item, "key": "k" + strconv.Itoa(keys)})
			if a.Code() != "" {
				return "", a.Code()
			}
			var o struct{ OrderSn string }
			if err := json.Unmarshal(a.Data["placeOrder"], &o); err != nil {
				t.Fatal(err)
			}
			return o.OrderSn, ""
		}
		mustPlace := func(token string, n int, when string) (sns []string) {
			t.Helper()
			for i := range n {
				sn, code := place(token)
				if code != "" {
					t.Fatalf("%s: order %d answered %s", when, i+1, code)
				}
				sns = append(sns, sn)
			}
			return sns
		}
		refused := func(token, when string) {
			t.Helper()
			if sn, code := place(token); code != "PURCHASE_LIMIT_EXCEEDED" {
				t.Errorf("%s: order %q answered %q, want PURCHASE_LIMIT_EXCEEDED", when, sn, code)
			}
		}
		edit := func(limit string) {
			t.Helper()
			var v struct{ Goods struct{ Version int64 } }
			a := gqltest.Do(t, h, admin, `query($id: ID!) { goods(id: $id) { version } }`, map[string]any{"id": goods})
			if a.Code() != "" || json.Unmarshal(a.Data["goods"], &v.Goods) != nil {
				t.Fatalf("goods: %+v", a)
			}
			a = gqltest.Do(t, h, admin, `mutation($id: ID!, $v: Int!) { updateGoods(input: {goodsId: $id, expectedVersion: $v, `+limit+`}) { purchaseLimit } }`,
				map[string]any{"id": goods, "v": v.Goods.Version})
			if a.Code() != "" {
				t.Fatalf("updateGoods(%s): %+v", limit, a)
			}
		}
		clean := func(when string) {
			t.Helper()
			if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) != 0 {
				t.Errorf("%s: reconcile %v %v, want nothing", when, diffs, err)
			}
		}

		held := mustPlace(bob, 3, "no limit")
		edit("purchaseLimit: 2")
		refused(bob, "3 held, limit 2 set")
		clean("limit set")
		edit("clearPurchaseLimit: true")
		held = append(held, mustPlace(bob, 2, "limit cleared")...)
		edit("purchaseLimit: 2")
		refused(bob, "5 held, limit 2 set again")
		clean("limit set again")
		// Down to 1 standing: exactly one more.
		for _, sn := range held[:4] {
			if a := gqltest.Do(t, h, bob, `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`, map[string]any{"sn": sn}); a.Code() != "" {
				t.Fatalf("cancel %s: %+v", sn, a)
			}
		}
		mustPlace(bob, 1, "1 standing of 2")
		refused(bob, "2 standing of 2")
		mustPlace(carol, 2, "another customer")
		refused(carol, "another customer past the limit")
		clean("at the end")
		var units int64
		if err := db.SQL.QueryRowContext(ctx, "SELECT units FROM purchase_count WHERE goods_id = ? AND user_id = ?", g.ID, "bob").Scan(&units); err != nil || units != 2 {
			t.Errorf("bob's purchase count %d (%v), want 2", units, err)
		}
	})
}
