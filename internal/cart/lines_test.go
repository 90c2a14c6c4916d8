package cart

import (
	"context"
	"fmt"
	"maps"
	"testing"

	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// One line per SKU however it is named, quantities adding up, the per-line
// maximum and the 50-line cap refused with nothing changed, updates and
// removals.
func TestLinesMergeCapsAndRemoval(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		blackL, whiteS := f.tshirt(t, "黑色,L"), f.tshirt(t, "白色,S")
		view, err := f.cat.Goods(ctx, catalogAdmin, f.ids[demo.TShirtCode])
		if err != nil {
			t.Fatal(err)
		}
		var blackLValues []int64
		for _, k := range view.SkuList(true) {
			if k.ID == blackL {
				blackLValues = k.SpecValueIDs
			}
		}
		goods := f.ids[demo.TShirtCode]
		// The same SKU by id and by its spec values in reverse order: one line.
		c := f.ok(f.svc.Create(ctx, "", []LineInput{item(blackL, 1), {GoodsID: &goods, SpecValueIDs: []int64{blackLValues[1], blackLValues[0]}, Quantity: 2}}))
		if got := quantities(c); !maps.Equal(got, map[int64]int64{blackL: 3}) {
			t.Fatalf("lines %v, want {%d: 3}", got, blackL)
		}
		c = f.ok(f.svc.AddLines(ctx, "", c.ID, []LineInput{item(blackL, 4), item(whiteS, 1)}))
		if got := quantities(c); !maps.Equal(got, map[int64]int64{blackL: 7, whiteS: 1}) {
			t.Fatalf("after add: %v", got)
		}
		before := quantities(c)
		max := f.co.Config().MaxQuantity
		_, err = f.svc.AddLines(ctx, "", c.ID, []LineInput{item(whiteS, 1), item(blackL, max-6)})
		wantErr(t, err, checkout.ErrInvalidQuantity)
		_, err = f.svc.AddLines(ctx, "", c.ID, []LineInput{item(whiteS, 0)})
		wantErr(t, err, checkout.ErrInvalidQuantity)
		// 49 more SKUs make 51 lines.
		var many []LineInput
		for _, id := range f.shoes(t, 49) {
			many = append(many, item(id, 1))
		}
		_, err = f.svc.AddLines(ctx, "", c.ID, many)
		wantErr(t, err, errs.InvalidInput)
		if got := quantities(f.read(t, "", c.ID)); !maps.Equal(got, before) {
			t.Fatalf("refused adds changed the cart: %v, want %v", got, before)
		}
		c = f.ok(f.svc.AddLines(ctx, "", c.ID, many[:48])) // 50 lines: the most
		if len(c.Lines) != 50 {
			t.Fatalf("%d lines, want 50", len(c.Lines))
		}
		var lineOf = map[int64]int64{}
		for _, l := range c.Lines {
			lineOf[l.ItemID] = l.ID
		}
		// 0 removes; an unknown line id refuses the whole update.
		_, err = f.svc.UpdateLines(ctx, "", c.ID, []LineUpdate{{lineOf[whiteS], 0}, {999999, 1}})
		wantErr(t, err, errs.NotFound)
		c = f.ok(f.svc.UpdateLines(ctx, "", c.ID, []LineUpdate{{lineOf[whiteS], 0}, {lineOf[blackL], 2}}))
		if got := quantities(c); got[blackL] != 2 || got[whiteS] != 0 || len(c.Lines) != 49 {
			t.Fatalf("after update: %d lines, %v", len(c.Lines), got)
		}
		_, err = f.svc.UpdateLines(ctx, "", c.ID, []LineUpdate{{lineOf[blackL], max + 1}})
		wantErr(t, err, checkout.ErrInvalidQuantity)
		var rm []int64
		for _, l := range c.Lines {
			if l.ItemID != blackL {
				rm = append(rm, l.ID)
			}
		}
		c = f.ok(f.svc.RemoveLines(ctx, "", c.ID, rm))
		if got := quantities(c); !maps.Equal(got, map[int64]int64{blackL: 2}) {
			t.Fatalf("after remove: %v", got)
		}
		_, err = f.svc.RemoveLines(ctx, "", c.ID, rm[:1])
		wantErr(t, err, errs.NotFound)
		if c.Cost.TotalQuantity != 2 {
			t.Fatalf("totalQuantity %d", c.Cost.TotalQuantity)
		}
	})
}

// Adding a SKU that is not on sale is refused; one that goes off sale
// later stays with a warning (TestWarnings).
func TestAddUnavailable(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.tshirt(t, "藏青,M")
		f.disable(t, id)
		_, err := f.svc.Create(ctx, "", []LineInput{item(id, 1)})
		wantErr(t, err, checkout.ErrSkuUnavailable)
		none := int64(987654)
		_, err = f.svc.Create(ctx, "", []LineInput{item(none, 1)})
		wantErr(t, err, errs.NotFound)
		_, err = f.svc.AddLines(ctx, "", fmt.Sprintf("%032x", 1), []LineInput{item(f.tshirt(t, "黑色,S"), 1)})
		wantErr(t, err, errs.NotFound)
	})
}
