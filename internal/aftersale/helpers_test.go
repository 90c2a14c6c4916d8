package aftersale_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"storefront/ent/orderline"
	"storefront/ent/sku"
	"storefront/internal/aftersale"
	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/payments"
	"storefront/internal/payments/mock"
	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

const secret = "test-secret"

type fixture struct {
	db     *store.DB
	orders *checkout.Service
	pay    *payments.Service
	as     *aftersale.Service
	items  []int64 // two SKUs of the demo T-shirt with stock
	// address is buyer-1's demo address once shippable added it.
	address int64
}

var (
	admin = aftersale.Actor{ID: "admin-1", Admin: true}
	ctx   = context.Background()
)

func setup(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(ctx, cat)
	if err != nil {
		t.Fatal(err)
	}
	cfg := payments.DefaultConfig().With(mock.New("mock", secret, "m-1", "CNY"))
	orders, pay, afterSales := app.Orders(db, checkout.DefaultConfig(), cfg, aftersale.DefaultConfig())
	items := db.Client.Sku.Query().Where(sku.GoodsID(ids[demo.TShirtCode]), sku.StockGT(20)).Order(sku.ByID()).Limit(2).IDsX(ctx)
	if len(items) < 2 {
		t.Fatalf("demo T-shirt SKUs with stock: %v", items)
	}
	return &fixture{db: db, orders: orders, pay: pay, as: afterSales, items: items}
}

// paid places an order of user for qty units of each SKU and pays it
// through the mock provider's signed notification.
func (f *fixture) paid(t *testing.T, user string, qty int64, items ...int64) *checkout.Order {
	t.Helper()
	var in []checkout.ItemInput
	for _, id := range items {
		in = append(in, checkout.ItemInput{ItemID: &id, Quantity: qty})
	}
	o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: user, Items: in, IdempotencyKey: fmt.Sprint(time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	return f.pays(t, o)
}

// shippable places and pays an order of qty units of item for buyer-1,
// to the demo address (added to their book once), under key.
func (f *fixture) shippable(t *testing.T, item, qty int64, key string) *checkout.Order {
	t.Helper()
	if f.address == 0 {
		a, err := shipping.New(f.db).AddAddress(ctx, "buyer-1", shipping.AddressInput{OrderAddress: demo.DemoAddress})
		if err != nil {
			t.Fatal(err)
		}
		f.address = a.ID
	}
	o, err := f.orders.Place(ctx, checkout.PlaceInput{UserID: "buyer-1", AddressID: &f.address,
		Items: []checkout.ItemInput{{ItemID: &item, Quantity: qty}}, IdempotencyKey: key})
	if err != nil {
		t.Fatal(err)
	}
	return f.pays(t, o)
}

// shipOne ships one unit of item of o.
func (f *fixture) shipOne(t *testing.T, o *checkout.Order, item int64, tracking string) {
	t.Helper()
	if _, err := f.orders.Ship(ctx, checkout.ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: tracking,
		Lines: []checkout.ShipLine{{ItemID: item, Quantity: 1}}}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) pays(t *testing.T, o *checkout.Order) *checkout.Order {
	t.Helper()
	cur := f.db.Client.Order.GetX(ctx, o.ID)
	n := mock.Notification{EventID: "ev-" + o.OrderSn, PaymentID: "pay-" + o.OrderSn, OrderSn: o.OrderSn, Amount: cur.Amount.String(),
		Currency: "CNY", MerchantID: "m-1", Status: "SUCCESS", Timestamp: time.Now().Unix()}
	body, _ := json.Marshal(n)
	if out, err := f.pay.Notify(ctx, "mock", mock.Header(mock.Sign(secret, body)), body); err != nil || out != payments.OutcomeApplied {
		t.Fatalf("paying %s: %v %v", o.OrderSn, out, err)
	}
	return f.order(t, o.OrderSn)
}

func (f *fixture) order(t *testing.T, sn string) *checkout.Order {
	t.Helper()
	o, err := f.orders.Order(ctx, "", true, sn)
	if err != nil || o == nil {
		t.Fatalf("order %s: %v", sn, err)
	}
	return o
}

// shipAll marks every unit of o shipped, as shipOrder would (these tests
// are about what comes after).
func (f *fixture) shipAll(t *testing.T, o *checkout.Order) {
	t.Helper()
	if _, err := f.db.SQL.ExecContext(ctx, "UPDATE order_line SET shipped_quantity = quantity WHERE order_id = ?", o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.SQL.ExecContext(ctx, "UPDATE orders SET status = ? WHERE id = ?", string(enums.OrderShipped), o.ID); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) request(t *testing.T, o *checkout.Order, typ enums.AfterSaleType, lines ...aftersale.LineInput) *aftersale.AfterSale {
	t.Helper()
	a, err := f.as.Request(ctx, aftersale.RequestInput{UserID: o.UserID, OrderSn: o.OrderSn, Type: typ, Lines: lines, Reason: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (f *fixture) stock(t *testing.T, item int64) int64 { return testdb.Stock(t, f.db, item) }

// clean fails the test unless every SKU's stock is the sum of its ledger,
// its locks are what open orders hold, and every order's money agrees with
// the money ledger (differences of orders flagged for review aside).
func (f *fixture) clean(t *testing.T) {
	t.Helper()
	diffs, err := inventory.New(f.db).Reconcile(ctx, 100)
	if err != nil || len(diffs) != 0 {
		t.Errorf("reconcile: %v %+v", err, diffs)
	}
	money, err := f.pay.ReconcileMoney(ctx)
	if err != nil {
		t.Errorf("reconciling money: %v", err)
	}
	for _, d := range money {
		if !d.Review {
			t.Errorf("reconcile: %s", d)
		}
	}
}

func (f *fixture) lineOf(t *testing.T, o *checkout.Order, item int64) (asQty, withheld int64) {
	t.Helper()
	l := f.db.Client.OrderLine.Query().Where(orderline.OrderID(o.ID), orderline.ItemID(item)).OnlyX(ctx)
	return l.AfterSaleQuantity, l.WithheldQuantity
}
