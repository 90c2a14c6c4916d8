package checkout

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"storefront/ent/outbox"
	"storefront/ent/stocklog"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

func TestPlaceOrderBySpecValues(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		g, err := catalog.New(db, catalog.DefaultConfig()).Goods(ctx, catalog.Viewer{}, f.ids[demo.TShirtCode])
		if err != nil {
			t.Fatal(err)
		}
		var black, l int64
		for _, sp := range g.Specs {
			for _, v := range sp.Values {
				switch v.Name {
				case "黑色":
					black = v.ID
				case "L":
					l = v.ID
				}
			}
		}
		blackL := f.skuID(t, "黑色,L")
		// [L, 黑色]: the spec key makes the click order irrelevant; the same SKU
		// named twice is merged into one line.
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Remark: "gift", Items: []ItemInput{
			{GoodsID: new(f.ids[demo.TShirtCode]), SpecValueIDs: []int64{l, black}, Quantity: 2},
			one(blackL, 1),
		}})
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		if len(o.Lines) != 1 || o.Lines[0].ItemID != blackL || o.Lines[0].Quantity != 3 {
			t.Fatalf("lines = %+v, want one line of 3 × SKU %d", o.Lines, blackL)
		}
		if want := money.MustParse("327.00"); o.Amount != want || o.Lines[0].UnitPrice != money.MustParse("109.00") {
			t.Errorf("amount = %s, unit = %s; want %s from the database price 109.00", o.Amount, o.Lines[0].UnitPrice, want)
		}
		if o.Status != enums.OrderUnpaid || o.Currency != "CNY" || len(o.OrderSn) != 26 || o.Lines[0].SpecValueStr != "黑色,L" {
			t.Errorf("order = %+v", o)
		}
		if got := f.stock(t, blackL); got != 197 {
			t.Errorf("stock = %d, want 197", got)
		}
		led, err := db.Client.StockLog.Query().Where(stocklog.BizSn(o.OrderSn)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if led.ChangeType != 1 || led.ChangeNum != -3 || led.BeforeStock != 200 || led.AfterStock != 197 || led.BizType != "order" || led.ItemID != blackL {
			t.Errorf("ledger row = %+v", led)
		}
		if n, _ := db.Client.Outbox.Query().Where(outbox.Type(EventOrderPlaced), outbox.AggregateID(o.OrderSn)).Count(ctx); n != 1 {
			t.Errorf("OrderPlaced events = %d, want 1", n)
		}
		back, err := f.svc.Order(ctx, "u1", false, o.OrderSn)
		if err != nil || back == nil || back.Amount != o.Amount || len(back.Lines) != 1 {
			t.Errorf("Order() = %+v, %v", back, err)
		}
		if other, err := f.svc.Order(ctx, "u2", false, o.OrderSn); other != nil || err != nil {
			t.Errorf("another user's Order() = %+v, %v; want nil", other, err)
		}
	})
}

func TestPlaceOrderValidationWritesNothing(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL, blackM := f.skuID(t, "黑色,L"), f.skuID(t, "黑色,M")
		if _, err := db.SQL.Exec("UPDATE sku SET status = 'DISABLED' WHERE id = ?", blackM); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec("UPDATE goods SET status = 'OFF_SHELF' WHERE id = ?", f.ids[demo.BagCode]); err != nil {
			t.Fatal(err)
		}
		bagSku, err := db.Client.Sku.Query().Where().All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var bag int64
		for _, s := range bagSku {
			if s.GoodsID == f.ids[demo.BagCode] {
				bag = s.ID
			}
		}
		many := make([]ItemInput, 51)
		for i := range many {
			many[i] = one(blackL, 1)
		}
		before := f.counts(t)
		for _, tc := range []struct {
			name string
			in   PlaceInput
			want error
		}{
			{"quantity 0", PlaceInput{Items: []ItemInput{one(blackL, 0)}}, ErrInvalidQuantity},
			{"negative quantity", PlaceInput{Items: []ItemInput{one(blackL, -1)}}, ErrInvalidQuantity},
			{"above maximum", PlaceInput{Items: []ItemInput{one(blackL, 1000)}}, ErrInvalidQuantity},
			{"merged above maximum", PlaceInput{Items: []ItemInput{one(blackL, 600), one(blackL, 600)}}, ErrInvalidQuantity},
			{"51 lines", PlaceInput{Items: many}, ErrInvalidInput},
			{"no items", PlaceInput{}, ErrInvalidInput},
			{"itemId and goodsId", PlaceInput{Items: []ItemInput{{ItemID: &blackL, GoodsID: new(f.ids[demo.TShirtCode]), Quantity: 1}}}, ErrInvalidInput},
			{"neither", PlaceInput{Items: []ItemInput{{SpecValueIDs: []int64{1}, Quantity: 1}}}, ErrInvalidInput},
			{"remark too long", PlaceInput{Remark: strings.Repeat("长", 86), Items: []ItemInput{one(blackL, 1)}}, ErrInvalidInput}, // 258 bytes
			{"key too long", PlaceInput{IdempotencyKey: strings.Repeat("k", 256), Items: []ItemInput{one(blackL, 1)}}, ErrInvalidInput},
			{"unknown SKU", PlaceInput{Items: []ItemInput{one(blackL, 1), one(999999, 1)}}, ErrNotFound},
			{"unknown selection", PlaceInput{Items: []ItemInput{{GoodsID: new(f.ids[demo.TShirtCode]), SpecValueIDs: []int64{1, 2}, Quantity: 1}}}, ErrNotFound},
			{"disabled SKU", PlaceInput{Items: []ItemInput{one(blackL, 1), one(blackM, 1)}}, ErrSkuUnavailable},
			{"goods off shelf", PlaceInput{Items: []ItemInput{one(bag, 1)}}, ErrSkuUnavailable},
			{"out of stock", PlaceInput{Items: []ItemInput{one(blackL, 1), one(f.skuID(t, "黑色,S"), 1)}}, ErrOutOfStock},
			// The short SKU has the higher id: 黑色,L is deducted first and
			// must be rolled back with the rest.
			{"out of stock after a deduction", PlaceInput{Items: []ItemInput{one(blackL, 1), one(f.skuID(t, "黑色,XL"), 1)}}, ErrOutOfStock},
			{"out of stock after a deduction, named first", PlaceInput{Items: []ItemInput{one(f.skuID(t, "藏青,XL"), 6), one(blackL, 1)}}, ErrOutOfStock},
			// One SKU by id: the group path's batch decides these.
			{"unknown SKU alone", PlaceInput{Items: []ItemInput{one(999999, 1)}}, ErrNotFound},
			{"disabled SKU alone", PlaceInput{Items: []ItemInput{one(blackM, 1)}}, ErrSkuUnavailable},
			{"out of stock alone", PlaceInput{Items: []ItemInput{one(f.skuID(t, "黑色,S"), 1)}}, ErrOutOfStock},
			{"more than the stock", PlaceInput{Items: []ItemInput{one(blackL, 201)}}, ErrOutOfStock},
		} {
			tc.in.UserID = "u1"
			_, err := f.svc.Place(ctx, tc.in)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
			}
		}
		if after := f.counts(t); !equalCounts(before, after) {
			t.Errorf("rows changed by refused orders: before %v, after %v", before, after)
		}
		if got := f.stock(t, blackL); got != 200 {
			t.Errorf("stock = %d after refused orders, want 200", got)
		}
		if led := f.ledgerSum(t, blackL, 0); led != 200 {
			t.Errorf("ledger balance of 黑色,L = %d after refused orders, want 200", led)
		}
	})
}

// Every multi-SKU order locks its SKUs in ascending id order, whatever the
// order of its items, so two orders can never wait on each other's rows. The
// ledger rows are written as each CAS takes its row: their ids show the
// order the rows were locked in.
func TestMultiSKUOrderLocksInAscendingOrder(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		f := setup(t, db, p)
		ids := []int64{f.skuID(t, "藏青,S"), f.skuID(t, "白色,XL"), f.skuID(t, "黑色,M"), f.skuID(t, "藏青,L")}
		items := make([]ItemInput, len(ids))
		for i, id := range ids {
			items[i] = one(id, 1)
		}
		o, err := f.svc.Place(context.Background(), PlaceInput{UserID: "u1", Items: items})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := db.SQL.Query("SELECT item_id FROM stock_log WHERE biz_sn = ? ORDER BY id", o.OrderSn)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var booked []int64
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			booked = append(booked, id)
		}
		if len(booked) != len(ids) || !slices.IsSorted(booked) {
			t.Errorf("SKUs deducted in the order %v; want all %d in ascending id order", booked, len(ids))
		}
	})
}

func TestOutOfStockNamesTheSKU(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		f := setup(t, db, p)
		blackS := f.skuID(t, "黑色,S")
		_, err := f.svc.Place(context.Background(), PlaceInput{UserID: "u1", Items: []ItemInput{one(blackS, 1)}})
		if !errors.Is(err, ErrOutOfStock) || !strings.Contains(err.Error(), itoa(blackS)) || !strings.Contains(err.Error(), "黑色,S") {
			t.Errorf("err = %v, want OUT_OF_STOCK naming SKU %d 黑色,S", err, blackS)
		}
	})
}

func equalCounts(a, b map[string]int) bool {
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestMyOrdersPaging(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL := f.skuID(t, "黑色,L")
		var sns []string
		for i := range 3 {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Remark: itoa(int64(i)), Items: []ItemInput{one(blackL, 1)}})
			if err != nil {
				t.Fatal(err)
			}
			sns = append(sns, o.OrderSn)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{one(blackL, 1)}}); err != nil {
			t.Fatal(err)
		}
		p1, err := f.svc.MyOrders(ctx, "u1", 2, "")
		if err != nil || len(p1.Orders) != 2 || !p1.HasNextPage || p1.Orders[0].OrderSn != sns[2] || p1.Orders[1].OrderSn != sns[1] {
			t.Fatalf("page 1 = %+v, %v; want the two newest of u1", p1, err)
		}
		p2, err := f.svc.MyOrders(ctx, "u1", 2, Cursor(p1.Orders[1].ID))
		if err != nil || len(p2.Orders) != 1 || p2.HasNextPage || p2.Orders[0].OrderSn != sns[0] || len(p2.Orders[0].Lines) != 1 {
			t.Errorf("page 2 = %+v, %v; want the oldest, with its line", p2, err)
		}
		if _, err := f.svc.MyOrders(ctx, "u1", 2, "garbage"); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("bad cursor: err = %v, want INVALID_INPUT", err)
		}
	})
}
