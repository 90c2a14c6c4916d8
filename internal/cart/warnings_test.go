package cart

import (
	"context"
	"slices"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

var catalogAdmin = catalog.Viewer{Admin: true}

func (f *fixture) skuVersion(t *testing.T, id int64) int64 {
	t.Helper()
	s, err := f.db.Client.Sku.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.Version
}

func (f *fixture) disable(t *testing.T, id int64) {
	t.Helper()
	st := enums.SkuDisabled
	if _, err := f.cat.UpdateSku(context.Background(), catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: f.skuVersion(t, id), Status: &st}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) reprice(t *testing.T, id int64, p money.Money) {
	t.Helper()
	if _, err := f.cat.UpdateSku(context.Background(), catalog.UpdateSkuInput{ItemID: id, ExpectedVersion: f.skuVersion(t, id), SellPrice: &p}); err != nil {
		t.Fatal(err)
	}
}

func (f *fixture) setStock(t *testing.T, id, n int64) {
	t.Helper()
	if _, err := f.inv.SetStock(context.Background(), inventory.SetStockInput{ItemID: id, Stock: n, ExpectedVersion: f.skuVersion(t, id), Reason: "cart test"}); err != nil {
		t.Fatal(err)
	}
}

type warned struct {
	code string
	line int64
}

func warnings(c *Cart) []warned {
	var out []warned
	for _, w := range c.Warnings {
		out = append(out, warned{w.Code, *w.LineID})
	}
	return out
}

// checkCost: every line at the SKU's current database price, and the cost
// their sum.
func (f *fixture) checkCost(t *testing.T, c *Cart) {
	t.Helper()
	var sum money.Money
	var units int64
	for _, l := range c.Lines {
		s, err := f.db.Client.Sku.Get(context.Background(), l.ItemID)
		if err != nil {
			t.Fatal(err)
		}
		if l.UnitPrice != s.SellPrice || l.Subtotal != s.SellPrice*money.Money(l.Quantity) {
			t.Errorf("line %d: unitPrice %s subtotal %s, the database says %s × %d", l.ID, l.UnitPrice, l.Subtotal, s.SellPrice, l.Quantity)
		}
		sum += l.Subtotal
		units += l.Quantity
	}
	if c.Cost.Subtotal != sum || c.Cost.TotalQuantity != units {
		t.Errorf("cost %s × %d, lines sum to %s × %d", c.Cost.Subtotal, c.Cost.TotalQuantity, sum, units)
	}
}

// Warnings appear after an admin disables a SKU, lowers its stock, changes
// its price, or takes the goods off shelf; the cost always follows the
// current prices; looking at a line (changing its quantity) clears
// PRICE_CHANGED.
func TestWarnings(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		a, b, c3 := f.tshirt(t, "黑色,M"), f.tshirt(t, "白色,M"), f.tshirt(t, "藏青,L")
		var bagID int64
		if err := f.db.SQL.QueryRow("SELECT id FROM sku WHERE goods_id = ?", f.ids[demo.BagCode]).Scan(&bagID); err != nil {
			t.Fatal(err)
		}
		c := f.ok(f.svc.Create(ctx, "", []LineInput{item(a, 2), item(b, 3), item(c3, 1), item(bagID, 1)}))
		if len(c.Warnings) != 0 {
			t.Fatalf("fresh cart warns: %v", warnings(c))
		}
		f.checkCost(t, c)
		line := map[int64]int64{}
		for _, l := range c.Lines {
			line[l.ItemID] = l.ID
		}

		f.disable(t, a)
		f.setStock(t, b, 2) // 3 in the cart
		f.setStock(t, c3, 0)
		f.reprice(t, c3, money.MustParse("1.23"))
		if _, err := f.cat.SetStatus(ctx, f.ids[demo.BagCode], enums.GoodsOffShelf); err != nil {
			t.Fatal(err)
		}
		c = f.read(t, "", c.ID)
		want := []warned{{WarnSkuUnavailable, line[a]}, {WarnNotEnoughStock, line[b]}, {WarnOutOfStock, line[c3]}, {WarnPriceChanged, line[c3]}, {WarnSkuUnavailable, line[bagID]}}
		got := warnings(c)
		sortWarned(got)
		sortWarned(want)
		if !slices.Equal(got, want) {
			t.Fatalf("warnings %v, want %v", got, want)
		}
		if len(c.Lines) != 4 {
			t.Fatalf("%d lines, want all 4 kept", len(c.Lines))
		}
		f.checkCost(t, c)

		c = f.ok(f.svc.UpdateLines(ctx, "", c.ID, []LineUpdate{{line[c3], 1}}))
		for _, w := range warnings(c) {
			if w.code == WarnPriceChanged {
				t.Fatalf("PRICE_CHANGED stays after the line was changed: %v", warnings(c))
			}
		}
		f.checkCost(t, c)
	})
}

func sortWarned(w []warned) {
	slices.SortFunc(w, func(x, y warned) int {
		if x.line != y.line {
			return int(x.line - y.line)
		}
		if x.code < y.code {
			return -1
		}
		if x.code > y.code {
			return 1
		}
		return 0
	})
}
