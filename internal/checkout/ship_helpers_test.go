package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"storefront/ent/outbox"
	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// shipFixture is the checkout fixture with the demo's shipping: the water
// bottle under its WEIGHT template (8.00 for 1,000 g + 2.00 per 500 g,
// Shanghai 5.00 + 1.00, free over 199.00) and shipping's service.
type shipFixture struct {
	*fixture
	ship     *shipping.Service
	bottle   int64 // goods
	template int64
	small    int64 // 500ml, 350 g, 59.00
	large    int64 // 750ml, 480 g, 79.00
}

func setupShipping(t *testing.T, f *fixture) *shipFixture {
	t.Helper()
	ctx := context.Background()
	sf := &shipFixture{fixture: f, ship: shipping.New(f.db)}
	var err error
	if sf.bottle, sf.template, err = demo.SeedShipping(ctx, catalog.New(f.db, catalog.DefaultConfig()), sf.ship, "demo"); err != nil {
		t.Fatalf("demo.SeedShipping: %v", err)
	}
	g, err := catalog.New(f.db, catalog.DefaultConfig()).Goods(ctx, catalog.Viewer{Admin: true}, sf.bottle)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range g.SkuList(false) {
		switch s.SpecValueStr {
		case demo.BottleSizes[0].Size:
			sf.small = s.ID
		case demo.BottleSizes[1].Size:
			sf.large = s.ID
		}
	}
	return sf
}

// addr adds an address in region to user's book and returns its id.
func (f *shipFixture) addr(t *testing.T, user, region string) int64 {
	t.Helper()
	a := demo.DemoAddress
	a.RegionCode = region
	got, err := f.ship.AddAddress(context.Background(), user, shipping.AddressInput{OrderAddress: a})
	if err != nil {
		t.Fatalf("AddAddress(%s, %s): %v", user, region, err)
	}
	return got.ID
}

// paid places a paid order of items for user shipping to address.
func (f *shipFixture) paid(t *testing.T, user string, address int64, items ...ItemInput) *Order {
	t.Helper()
	o, err := f.svc.Place(context.Background(), PlaceInput{UserID: user, Items: items, AddressID: &address, IdempotencyKey: newKey()})
	if err != nil {
		t.Fatalf("Place: %v", err)
	}
	if !f.pay(t, o.ID, Payer{ID: o.ID, Provider: "mock", PaymentID: "p-" + o.OrderSn, Amount: o.Amount}) {
		t.Fatalf("order %s not paid", o.OrderSn)
	}
	return o
}

func (f *shipFixture) order(t *testing.T, sn string) *Order {
	t.Helper()
	o, err := f.svc.load(context.Background(), sn)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// shippedEvents reads the OrderShipped events of order sn.
func (f *shipFixture) shippedEvents(t *testing.T, sn string) []shippedPayload {
	t.Helper()
	rows, err := f.db.Client.Outbox.Query().Where(outbox.Type(EventOrderShipped)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []shippedPayload
	for _, r := range rows {
		var p shippedPayload
		if err := json.Unmarshal([]byte(r.Payload), &p); err != nil {
			t.Fatal(err)
		}
		if p.OrderSn == sn {
			out = append(out, p)
		}
	}
	return out
}

func (f *shipFixture) newTemplate(t *testing.T, by enums.ChargeBy, rules ...shipping.Rule) int64 {
	t.Helper()
	tp, err := f.ship.CreateTemplate(context.Background(), shipping.TemplateInput{Name: "test", ChargeBy: by, Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	return tp.ID
}

// underTemplate moves goods under template (0: free shipping).
func (f *shipFixture) underTemplate(t *testing.T, goods, template int64) {
	t.Helper()
	cat := catalog.New(f.db, catalog.DefaultConfig())
	g, err := cat.Goods(context.Background(), catalog.Viewer{Admin: true}, goods)
	if err != nil {
		t.Fatal(err)
	}
	in := catalog.UpdateGoodsInput{GoodsID: goods, ExpectedVersion: g.Version}
	if template == 0 {
		in.ClearShippingTemplate = true
	} else {
		in.ShippingTemplateID = &template
	}
	if _, err := cat.UpdateGoods(context.Background(), in); err != nil {
		t.Fatal(err)
	}
}

func m(s string) money.Money { return money.MustParse(s) }

var keys atomic.Int64

// newKey is a key no other order of the test run has: orders of the same
// input would otherwise be one order (the fallback key's window).
func newKey() string { return fmt.Sprint("ship-test-", keys.Add(1)) }

// bagSKU is the demo bag's one SKU.
func (f *shipFixture) bagSKU(t *testing.T) int64 {
	t.Helper()
	id, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids["DEMO-BAG"])).OnlyID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// eventsOfOrder counts the events of type typ about order sn.
func (f *shipFixture) eventsOfOrder(t *testing.T, typ, sn string) int {
	t.Helper()
	rows, err := f.db.Client.Outbox.Query().Where(outbox.Type(typ)).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range rows {
		var p struct{ OrderSn string }
		if json.Unmarshal([]byte(r.Payload), &p) == nil && p.OrderSn == sn {
			n++
		}
	}
	return n
}
