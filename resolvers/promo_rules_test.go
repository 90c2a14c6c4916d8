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

// promoAPI is an app with a goods of 199.00 (100 in stock), an admin and
// customers, over GraphQL in process.
type promoAPI struct {
	t           *testing.T
	db          *store.DB
	sf          *app.App
	admin       string
	tokens      map[string]string
	goods, item string
	keys        int
}

func newPromoAPI(t *testing.T, db *store.DB, users ...string) *promoAPI {
	t.Helper()
	signer, err := auth.NewSigner("promo-rules-secret-0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	sf := app.New(db, nil, signer, app.DefaultConfig())
	t.Cleanup(sf.Close)
	p := &promoAPI{t: t, db: db, sf: sf, tokens: map[string]string{}}
	p.admin, _ = signer.Issue("admin", auth.Admin, time.Hour)
	for _, u := range users {
		p.tokens[u], _ = signer.Issue(u, auth.Customer, time.Hour)
	}
	g, err := sf.Catalog.Create(context.Background(), catalog.CreateInput{Name: "耳机", Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: 19900, Stock: 100}})
	if err != nil {
		t.Fatal(err)
	}
	p.goods, p.item = strconv.FormatInt(g.ID, 10), strconv.FormatInt(g.SkuList(false)[0].ID, 10)
	return p
}

func (p *promoAPI) do(token, query string, vars map[string]any, field string, into any) gqltest.Answer {
	p.t.Helper()
	a := gqltest.Do(p.t, p.sf.Handler(), token, query, vars)
	if a.Code() == "" && into != nil {
		if err := json.Unmarshal(a.Data[field], into); err != nil {
			p.t.Fatalf("%s: %v", field, err)
		}
	}
	return a
}

// place orders one unit as user, with the user coupon when given: the
// order's number and discount, or the error's code.
func (p *promoAPI) place(user, userCoupon string) (sn, discount, code string) {
	p.t.Helper()
	p.keys++
	in := map[string]any{"items": []map[string]any{{"itemId": p.item, "quantity": 1}}}
	if userCoupon != "" {
		in["userCouponId"] = userCoupon
	}
	var o struct{ OrderSn, Discount string }
	a := p.do(p.tokens[user], `mutation($in: PlaceOrderInput!, $key: String) { placeOrder(input: $in, idempotencyKey: $key) { orderSn discount } }`,
		map[string]any{"in": in, "key": "k" + strconv.Itoa(p.keys)}, "placeOrder", &o)
	return o.OrderSn, o.Discount, a.Code()
}

// claimedCoupon creates an AMOUNT_OFF coupon of amountOff named name and
// claims it for user: the claimed coupon's id.
func (p *promoAPI) claimedCoupon(user, name, amountOff string) string {
	p.t.Helper()
	var c struct{ ID string }
	if a := p.do(p.admin, `mutation($name: String!, $off: Money!) { createCoupon(input: {name: $name, kind: AMOUNT_OFF, amountOff: $off}) { id } }`,
		map[string]any{"name": name, "off": amountOff}, "createCoupon", &c); a.Code() != "" {
		p.t.Fatalf("createCoupon: %+v", a)
	}
	var uc struct{ ID string }
	if a := p.do(p.tokens[user], `mutation($id: ID!) { claimCoupon(couponId: $id) { id } }`, map[string]any{"id": c.ID}, "claimCoupon", &uc); a.Code() != "" {
		p.t.Fatalf("claimCoupon: %+v", a)
	}
	return uc.ID
}

// Another customer's claimed coupon, still AVAILABLE, is not one's own:
// placeOrder with it is COUPON_NOT_APPLICABLE and writes nothing; the
// coupon stays its owner's to use.
func TestAnotherCustomersCouponOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p := newPromoAPI(t, db, "bob", "carol")
		uc := struct{ ID string }{p.claimedCoupon("bob", "10 off", "10.00")}
		if sn, _, code := p.place("carol", uc.ID); code != "COUPON_NOT_APPLICABLE" {
			t.Errorf("carol ordering with bob's coupon: order %q, code %q; want COUPON_NOT_APPLICABLE", sn, code)
		}
		if n, err := db.Client.Order.Query().Count(ctx); err != nil || n != 0 {
			t.Errorf("%d orders after the refusal (%v), want 0", n, err)
		}
		var st string
		if err := db.SQL.QueryRowContext(ctx, "SELECT status FROM user_coupon WHERE id = ?", uc.ID).Scan(&st); err != nil || st != string(enums.CouponAvailable) {
			t.Errorf("bob's coupon is %q (%v), want AVAILABLE", st, err)
		}
		if _, discount, code := p.place("bob", uc.ID); code != "" || discount != "10.00" {
			t.Errorf("bob ordering with his coupon: discount %q, code %q; want 10.00", discount, code)
		}
	})
}

// One customer's close gives back their own purchase count only: bob
// holds the limit (2), carol 1; carol cancels hers; bob is still at his
// limit, carol may order 2 again.
func TestPurchaseCountsAreEachCustomersOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		p := newPromoAPI(t, db, "bob", "carol")
		var v struct{ Version int64 }
		if a := p.do(p.admin, `query($id: ID!) { goods(id: $id) { version } }`, map[string]any{"id": p.goods}, "goods", &v); a.Code() != "" {
			t.Fatalf("goods: %+v", a)
		}
		if a := p.do(p.admin, `mutation($id: ID!, $v: Int!) { updateGoods(input: {goodsId: $id, expectedVersion: $v, purchaseLimit: 2}) { id } }`,
			map[string]any{"id": p.goods, "v": v.Version}, "", nil); a.Code() != "" {
			t.Fatalf("updateGoods: %+v", a)
		}
		for range 2 {
			if _, _, code := p.place("bob", ""); code != "" {
				t.Fatalf("bob's order: %s", code)
			}
		}
		sn, _, code := p.place("carol", "")
		if code != "" {
			t.Fatalf("carol's order: %s", code)
		}
		if a := p.do(p.tokens["carol"], `mutation($sn: String!) { cancelOrder(orderSn: $sn) { status } }`, map[string]any{"sn": sn}, "", nil); a.Code() != "" {
			t.Fatalf("carol's cancel: %+v", a)
		}
		if sn, _, code := p.place("bob", ""); code != "PURCHASE_LIMIT_EXCEEDED" {
			t.Errorf("bob at his limit after carol's cancel: order %q, code %q; want PURCHASE_LIMIT_EXCEEDED", sn, code)
		}
		for i := range 2 {
			if _, _, code := p.place("carol", ""); code != "" {
				t.Errorf("carol's order %d after her cancel: %s", i+1, code)
			}
		}
	})
}
