package cart

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"storefront/ent/order"
	"storefront/ent/sku"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// fixture is a cart service on the demo catalog with a movable clock.
type fixture struct {
	t     *testing.T
	db    *store.DB
	cat   *catalog.Service
	inv   *inventory.Service
	co    *checkout.Service
	svc   *Service
	ids   map[string]int64
	mu    sync.Mutex
	clock time.Time
}

func setup(t *testing.T, db *store.DB) *fixture {
	t.Helper()
	cfg := catalog.DefaultConfig()
	cfg.StockTTL = time.Nanosecond
	cat := catalog.New(db, cfg)
	t.Cleanup(cat.Close)
	ids, err := demo.Seed(context.Background(), cat)
	if err != nil {
		t.Fatalf("demo.Seed: %v", err)
	}
	f := &fixture{t: t, db: db, cat: cat, inv: inventory.New(db), ids: ids, clock: time.Now().UTC()}
	f.co = checkout.New(db, checkout.DefaultConfig())
	f.svc = New(db, f.co, DefaultConfig())
	f.svc.SetClock(func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.clock })
	return f
}

func (f *fixture) advance(d time.Duration) { f.mu.Lock(); f.clock = f.clock.Add(d); f.mu.Unlock() }

// tshirt finds a T-shirt SKU by its spec text ("黑色,L").
func (f *fixture) tshirt(t *testing.T, spec string) int64 {
	t.Helper()
	id, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.TShirtCode]), sku.SpecValueStr(spec)).OnlyID(context.Background())
	if err != nil {
		t.Fatalf("SKU %s: %v", spec, err)
	}
	return id
}

// shoes returns n SKU ids of the 500-SKU shoe.
func (f *fixture) shoes(t *testing.T, n int) []int64 {
	t.Helper()
	ids, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[demo.ShoeCode])).Order(sku.ByID()).Limit(n).IDs(context.Background())
	if err != nil || len(ids) != n {
		t.Fatalf("shoe SKUs: %v (%d)", err, len(ids))
	}
	return ids
}

func (f *fixture) stock(t *testing.T, id int64) int64 { return testdb.Stock(t, f.db, id) }

func (f *fixture) orders(t *testing.T, user string) int {
	t.Helper()
	n, err := f.db.Client.Order.Query().Where(order.UserID(user)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func item(id, q int64) LineInput { return LineInput{ItemID: &id, Quantity: q} }

// ok fails the test on err and returns the cart.
func (f *fixture) ok(c *Cart, err error) *Cart {
	t := f.t
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Fatal("no cart")
	}
	return c
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err = %v, want %v", err, want)
	}
}

// quantities is the cart's lines as SKU → quantity.
func quantities(c *Cart) map[int64]int64 {
	m := map[int64]int64{}
	for _, l := range c.Lines {
		m[l.ItemID] = l.Quantity
	}
	return m
}

// read reads the cart as a shopper shown all of it (prices and warnings).
func (f *fixture) read(t *testing.T, who, token string) *Cart {
	t.Helper()
	c, err := f.svc.Cart(ShowingPrices(context.Background(), true), who, token)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
