package resolvers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
)

// Issue 41's contract over GraphQL, in process: freight templates and a
// goods under one with SKU weights (admin), the address book (customers),
// placeOrder and the cart priced with shipping, shipOrder, confirmReceipt,
// the admin order list, and the codes and roles of each.
func TestShippingOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		signer, err := auth.NewSigner("shipping-test-secret-0123456789ab")
		if err != nil {
			t.Fatal(err)
		}
		cfg := app.DefaultConfig()
		cfg.Catalog.StockTTL = time.Nanosecond
		sf := app.New(db, nil, signer, cfg)
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		bob, _ := signer.Issue("bob", auth.Customer, time.Hour)
		carol, _ := signer.Issue("carol", auth.Customer, time.Hour)
		do := func(token, query string, vars map[string]any, into ...any) gqltest.Answer {
			t.Helper()
			a := gqltest.Do(t, h, token, query, vars)
			if len(into) > 0 {
				if a.Code() != "" {
					t.Fatalf("%s: %+v", query, a.Errors)
				}
				for _, v := range a.Data {
					if err := json.Unmarshal(v, into[0]); err != nil {
						t.Fatal(err)
					}
				}
			}
			return a
		}
		code := func(what string, a gqltest.Answer, want string) {
			t.Helper()
			if a.Code() != want {
				t.Errorf("%s: code %q (%+v), want %s", what, a.Code(), a.Errors, want)
			}
		}

		// A template: 10.00 for the first kilogram and 3.00 per 500 g,
		// Zhejiang only 6.00 + 1.00; nothing to Xinjiang (65).
		create := `mutation($in: CreateShippingTemplateInput!) { createShippingTemplate(input: $in) { id name chargeBy freeOver version rules { regionCodes firstUnits firstFee nextUnits nextFee } } }`
		tin := map[string]any{"name": "按重", "chargeBy": "WEIGHT", "freeOver": "500.00", "rules": []any{
			map[string]any{"regionCodes": []string{"11", "31", "32"}, "firstUnits": 1000, "firstFee": "10.00", "nextUnits": 500, "nextFee": "3.00"},
			map[string]any{"regionCodes": []string{"33"}, "firstUnits": 1000, "firstFee": "6.00", "nextUnits": 500, "nextFee": "1.00"},
		}}
		code("a customer's template", do(bob, create, map[string]any{"in": tin}), "FORBIDDEN")
		code("a rule region of 3 digits", do(admin, create, map[string]any{"in": map[string]any{"name": "x", "chargeBy": "PIECE",
			"rules": []any{map[string]any{"regionCodes": []string{"310"}, "firstUnits": 1, "firstFee": "1.00", "nextUnits": 1, "nextFee": "1.00"}}}}), "INVALID_INPUT")
		for _, bad := range []string{"99", "3199", "310199", "990000"} {
			code("a rule region of no place: "+bad, do(admin, create, map[string]any{"in": map[string]any{"name": "x", "chargeBy": "PIECE",
				"rules": []any{map[string]any{"regionCodes": []string{"31", bad}, "firstUnits": 1, "firstFee": "1.00", "nextUnits": 1, "nextFee": "1.00"}}}}), "INVALID_INPUT")
		}
		var tp struct {
			ID, Name, ChargeBy, FreeOver string
			Version                      int
		}
		do(admin, create, map[string]any{"in": tin}, &tp)
		if tp.ChargeBy != "WEIGHT" || tp.FreeOver != "500.00" || tp.Version != 1 {
			t.Errorf("template: %+v", tp)
		}
		var list []struct{ ID string }
		do(admin, `{ shippingTemplates { id } }`, nil, &list)
		if len(list) != 1 || list[0].ID != tp.ID {
			t.Errorf("shippingTemplates: %+v", list)
		}

		// A goods under it, two SKUs of 400 g and 900 g.
		goodsQ := `mutation($in: CreateGoodsInput!) { createGoods(input: $in) { id shippingTemplateId version skus { id specValueStr weightGrams version } } }`
		gin := map[string]any{"name": "茶叶", "status": "ON_SHELF", "shippingTemplateId": tp.ID,
			"specs": []any{map[string]any{"name": "规格", "values": []string{"小罐", "大罐"}}},
			"skus": []any{map[string]any{"values": []string{"小罐"}, "sellPrice": "60.00", "stock": 50, "weightGrams": 400},
				map[string]any{"values": []string{"大罐"}, "sellPrice": "150.00", "stock": 50, "weightGrams": 900}}}
		code("an unknown template", do(admin, goodsQ, map[string]any{"in": map[string]any{"name": "x", "shippingTemplateId": "9999", "defaultSku": map[string]any{"sellPrice": "1.00"}}}), "NOT_FOUND")
		code("a negative weight", do(admin, goodsQ, map[string]any{"in": map[string]any{"name": "x", "defaultSku": map[string]any{"sellPrice": "1.00", "weightGrams": -1}}}), "INVALID_INPUT")
		var g struct {
			ID, ShippingTemplateID string
			Version                int
			Skus                   []struct {
				ID, SpecValueStr     string
				WeightGrams, Version int
			}
		}
		do(admin, goodsQ, map[string]any{"in": gin}, &g)
		if g.ShippingTemplateID != tp.ID || len(g.Skus) != 2 || g.Skus[0].WeightGrams != 400 || g.Skus[1].WeightGrams != 900 {
			t.Fatalf("goods: %+v", g)
		}
		small, large := g.Skus[0].ID, g.Skus[1].ID
		var sku struct{ WeightGrams int }
		do(admin, `mutation($id: ID!, $v: Int!) { updateSku(input: {itemId: $id, expectedVersion: $v, weightGrams: 450}) { weightGrams } }`,
			map[string]any{"id": small, "v": g.Skus[0].Version}, &sku)
		if sku.WeightGrams != 450 {
			t.Errorf("updateSku weightGrams: %+v", sku)
		}

		// The address book.
		addQ := `mutation($in: AddressInput!) { addAddress(input: $in) { id isDefault regionCode postalCode } }`
		ain := func(region string) map[string]any {
			return map[string]any{"in": map[string]any{"name": "李四", "phone": "13900139000", "regionCode": region, "province": "浙江省",
				"city": "杭州市", "district": "西湖区", "line": "文三路 1 号"}}
		}
		code("an anonymous address", do("", addQ, ain("330106")), "UNAUTHENTICATED")
		code("a 4-digit region", do(bob, addQ, ain("3301")), "INVALID_INPUT")
		for _, bad := range []string{"990000", "999999", "310199", "330100"} {
			code("region "+bad+", of no district", do(bob, addQ, ain(bad)), "INVALID_INPUT")
		}
		var hz, xj, bj struct {
			ID, RegionCode, PostalCode string
			IsDefault                  bool
		}
		do(bob, addQ, ain("330106"), &hz)
		do(bob, addQ, ain("650102"), &xj)
		do(bob, addQ, ain("110101"), &bj)
		if !hz.IsDefault || xj.IsDefault || hz.PostalCode != "" {
			t.Errorf("addresses: %+v %+v", hz, xj)
		}
		var book []struct {
			ID        string
			IsDefault bool
		}
		do(bob, `{ myAddresses { id isDefault } }`, nil, &book)
		if len(book) != 3 || book[0].ID != hz.ID || !book[0].IsDefault {
			t.Errorf("myAddresses: %+v", book)
		}
		// The names are the code's, whatever the input said (浙江省 杭州市
		// 西湖区 for 650102), and may be left out.
		var named []struct{ RegionCode, Province, City, District string }
		do(bob, `{ myAddresses { regionCode province city district } }`, nil, &named)
		for _, a := range named {
			want := map[string]string{"330106": "浙江省杭州市西湖区", "650102": "新疆维吾尔自治区乌鲁木齐市天山区", "110101": "北京市北京市东城区"}[a.RegionCode]
			if got := a.Province + a.City + a.District; got != want {
				t.Errorf("myAddresses: %s is %s, want %s", a.RegionCode, got, want)
			}
		}
		var bare struct{ ID string }
		do(bob, `mutation { addAddress(input: {name: "李四", phone: "13900139000", regionCode: "310104", line: "路 2 号"}) { id province city district } }`, nil, &bare)
		code("removing it", do(bob, `mutation($id: ID!) { removeAddress(id: $id) }`, map[string]any{"id": bare.ID}), "")
		code("carol's removal of bob's address", do(carol, `mutation($id: ID!) { removeAddress(id: $id) }`, map[string]any{"id": bj.ID}), "NOT_FOUND")

		// Orders: no address, an address no rule covers, then 400+450+900 g... priced.
		place := `mutation($items: [OrderItemInput!]!, $a: ID) { placeOrder(input: {items: $items, addressId: $a}) { orderSn amount shippingFee status shippingAddress { regionCode district } } }`
		items := []any{map[string]any{"itemId": small, "quantity": 2}, map[string]any{"itemId": large, "quantity": 1}}
		code("no address", do(bob, place, map[string]any{"items": items}), "ADDRESS_REQUIRED")
		code("Xinjiang", do(bob, place, map[string]any{"items": items, "a": xj.ID}), "SHIPPING_UNAVAILABLE")
		code("carol with bob's address", do(carol, place, map[string]any{"items": items, "a": hz.ID}), "NOT_FOUND")
		var o struct {
			OrderSn, Amount, ShippingFee, Status string
			ShippingAddress                      struct{ RegionCode, District string }
		}
		// 1,800 g to Zhejiang: 6.00 + 2 × 1.00; 270.00 + 8.00.
		do(bob, place, map[string]any{"items": items, "a": hz.ID}, &o)
		if o.ShippingFee != "8.00" || o.Amount != "278.00" || o.ShippingAddress.RegionCode != "330106" || o.ShippingAddress.District != "西湖区" {
			t.Errorf("order: %+v", o)
		}

		// The cart shows the fee for a chosen address and checks out to it.
		var cart struct {
			ID   string
			Cost struct {
				Subtotal string
				Shipping *string
				Hz       *string
				Bj       *string
			}
		}
		do(bob, `mutation($items: [CartLineInput!]!) { cartCreate(input: {lines: $items}) { id cost { subtotal shipping } } }`,
			map[string]any{"items": items}, &cart)
		if cart.Cost.Shipping != nil {
			t.Errorf("a cart's shipping without an address: %v, want null", *cart.Cost.Shipping)
		}
		do(bob, `query($id: ID!, $hz: ID, $bj: ID) { cart(id: $id) { id cost { subtotal hz: shipping(addressId: $hz) bj: shipping(addressId: $bj) } } }`,
			map[string]any{"id": cart.ID, "hz": hz.ID, "bj": bj.ID}, &cart)
		if cart.Cost.Hz == nil || *cart.Cost.Hz != "8.00" || cart.Cost.Bj == nil || *cart.Cost.Bj != "16.00" {
			t.Errorf("cart shipping: Hangzhou %v, Beijing %v; want 8.00 and 16.00", cart.Cost.Hz, cart.Cost.Bj)
		}
		code("the cart to Xinjiang", do(bob, `query($id: ID!, $a: ID) { cart(id: $id) { cost { shipping(addressId: $a) } } }`,
			map[string]any{"id": cart.ID, "a": xj.ID}), "SHIPPING_UNAVAILABLE")
		checkout := `mutation($id: ID!, $a: ID) { checkoutCart(cartId: $id, addressId: $a) { orderSn amount shippingFee } }`
		code("checking out without an address", do(bob, checkout, map[string]any{"id": cart.ID}), "ADDRESS_REQUIRED")
		var co struct{ OrderSn, Amount, ShippingFee string }
		do(bob, checkout, map[string]any{"id": cart.ID, "a": bj.ID}, &co)
		if co.ShippingFee != "16.00" || co.Amount != "286.00" {
			t.Errorf("checkoutCart to Beijing: %+v, want 16.00 and 286.00", co)
		}

		// Shipping the order: admins only, and not before it is paid.
		ship := `mutation($sn: String!) { shipOrder(input: {orderSn: $sn, carrier: "顺丰", trackingNo: "SF100"}) { status shipments { carrier trackingNo lines { itemId quantity } } lines { shippedQuantity } } }`
		code("a customer's shipment", do(bob, ship, map[string]any{"sn": o.OrderSn}), "FORBIDDEN")
		code("an unpaid shipment", do(admin, ship, map[string]any{"sn": o.OrderSn}), "INVALID_ORDER_STATE")

		// The admin list: customers may not; admins filter and count.
		listQ := `query($f: OrderFilter) { orders(first: 1, filter: $f) { totalCount edges { node { orderSn } } pageInfo { hasNextPage } } }`
		code("a customer's order list", do(bob, listQ, nil), "FORBIDDEN")
		var page struct {
			TotalCount int
			Edges      []struct{ Node struct{ OrderSn string } }
			PageInfo   struct{ HasNextPage bool }
		}
		do(admin, listQ, map[string]any{"f": map[string]any{"userId": "bob", "status": []string{"UNPAID"}}}, &page)
		if page.TotalCount != 2 || len(page.Edges) != 1 || page.Edges[0].Node.OrderSn != co.OrderSn || !page.PageInfo.HasNextPage {
			t.Errorf("orders: %+v", page)
		}
		var mine struct{ TotalCount int }
		do(bob, `{ myOrders(first: 0) { totalCount } }`, nil, &mine)
		if mine.TotalCount != 2 {
			t.Errorf("myOrders totalCount %d, want 2", mine.TotalCount)
		}
		code("confirming an unshipped order", do(bob, `mutation($sn: String!) { confirmReceipt(orderSn: $sn) { status } }`, map[string]any{"sn": o.OrderSn}), "INVALID_ORDER_STATE")
	})
}

// A page of orders asking for their shipments reads them in one query,
// however many orders the page holds (an N+1 guard).
func TestOrderShipmentsReadOncePerPage(t *testing.T) {
	ctx := context.Background()
	spec := testdb.Spec(t, testdb.SQLite)
	open := func(opts ...store.Option) *store.DB {
		db, err := store.Open(ctx, spec, opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	plain := open()
	if err := plain.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	signer, _ := auth.NewSigner("shipping-test-secret-0123456789ab")
	shop := app.New(plain, nil, signer, app.DefaultConfig()) // places the orders
	t.Cleanup(shop.Close)
	counted := app.New(open(testdb.CountReads(&reads)), nil, signer, app.DefaultConfig()) // answers the list
	t.Cleanup(counted.Close)
	ids, err := demo.Seed(ctx, shop.Catalog)
	if err != nil {
		t.Fatal(err)
	}
	g, err := shop.Catalog.Goods(ctx, catalog.Viewer{Admin: true}, ids[demo.BagCode])
	if err != nil {
		t.Fatal(err)
	}
	bag := g.SkuList(false)[0].ID
	admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
	h := counted.Handler()
	query := `{ orders(first: 50) { edges { node { orderSn shipments { trackingNo } } } } }`
	var counts []int64
	placed := 0
	for n := range 3 {
		for range 1 + 4*n {
			placed++
			if _, err := shop.Checkout.Place(ctx, checkout.PlaceInput{UserID: "bob", Items: []checkout.ItemInput{{ItemID: &bag, Quantity: 1}},
				IdempotencyKey: fmt.Sprint("n1-", placed)}); err != nil {
				t.Fatal(err)
			}
		}
		reads.Store(0)
		if a := gqltest.Do(t, h, admin, query, nil); a.Code() != "" {
			t.Fatalf("%+v", a.Errors)
		}
		counts = append(counts, reads.Load())
	}
	if counts[0] != counts[1] || counts[1] != counts[2] {
		t.Errorf("reads for pages of 1, 6 and 15 orders with their shipments: %v, want the same", counts)
	}
}
