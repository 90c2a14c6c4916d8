package checkout

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"storefront/ent"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// The admin order list against an oracle: 280 orders of five buyers over
// 280 minutes, in every status, then each filter (and some together) paged
// through 7 at a time: every page in the oracle's order, the count the
// oracle's, the last page the last.
func TestOrderListAgainstAnOracle(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		f.mu.Lock()
		f.clock = f.clock.Truncate(time.Second) // whole seconds: every backend stores them exactly
		f.mu.Unlock()
		skus := []int64{f.skuID(t, "黑色,L"), f.skuID(t, "白色,M"), f.skuID(t, "白色,S")}
		for _, id := range skus {
			f.setStock(t, id, 100_000)
		}
		type rec struct {
			id      int64
			sn      string
			user    string
			status  enums.OrderStatus
			created time.Time
		}
		statuses := []enums.OrderStatus{enums.OrderUnpaid, enums.OrderPaid, enums.OrderPartiallyShipped, enums.OrderShipped,
			enums.OrderCompleted, enums.OrderClosed, enums.OrderRefunded}
		addrs := map[string]int64{}
		var all []rec
		for i := range 280 {
			user := fmt.Sprint("u", i%5)
			if addrs[user] == 0 {
				addrs[user] = f.addr(t, user, "310104")
			}
			a := addrs[user]
			o, err := f.svc.Place(ctx, PlaceInput{UserID: user, Items: []ItemInput{one(skus[i%3], 2)}, AddressID: &a, IdempotencyKey: newKey()})
			if err != nil {
				t.Fatal(err)
			}
			st := statuses[(i*3+i/7)%len(statuses)]
			f.bring(t, o, st)
			if got := f.order(t, o.OrderSn).Status; got != st {
				t.Fatalf("order %d is %s, want %s", i, got, st)
			}
			all = append(all, rec{o.ID, o.OrderSn, user, st, o.CreatedAt})
			f.advance(time.Minute)
		}
		slices.SortFunc(all, func(a, b rec) int { return int(b.id - a.id) })
		at := func(i int) *time.Time { c := all[i].created; return &c } // all is newest first
		for _, tc := range []OrderFilter{
			{},
			{Statuses: []enums.OrderStatus{enums.OrderUnpaid}},
			{Statuses: []enums.OrderStatus{enums.OrderPaid}},
			{Statuses: []enums.OrderStatus{enums.OrderPartiallyShipped}},
			{Statuses: []enums.OrderStatus{enums.OrderShipped}},
			{Statuses: []enums.OrderStatus{enums.OrderCompleted}},
			{Statuses: []enums.OrderStatus{enums.OrderClosed}},
			{Statuses: []enums.OrderStatus{enums.OrderRefunded}},
			{Statuses: []enums.OrderStatus{enums.OrderShipped, enums.OrderUnpaid, enums.OrderShipped}},
			{Statuses: []enums.OrderStatus{enums.OrderCompleted, enums.OrderClosed, enums.OrderRefunded}},
			{UserID: "u3"},
			{UserID: "nobody"},
			{OrderSn: all[17].sn},
			{OrderSn: "20260101000000000000000000"},
			{CreatedAfter: at(200)},
			{CreatedBefore: at(40)},
			{CreatedAfter: at(180), CreatedBefore: at(60)},
			{UserID: "u1", Statuses: []enums.OrderStatus{enums.OrderShipped, enums.OrderPaid}},
			{Statuses: []enums.OrderStatus{enums.OrderUnpaid}, CreatedAfter: at(150), CreatedBefore: at(10)},
			{UserID: "u4", CreatedBefore: at(100)},
			{UserID: "u2", OrderSn: all[2].sn},
		} {
			var want []int64
			for _, r := range all {
				if (len(tc.Statuses) == 0 || slices.Contains(tc.Statuses, r.status)) && (tc.UserID == "" || tc.UserID == r.user) &&
					(tc.OrderSn == "" || tc.OrderSn == r.sn) && (tc.CreatedAfter == nil || !r.created.Before(*tc.CreatedAfter)) &&
					(tc.CreatedBefore == nil || r.created.Before(*tc.CreatedBefore)) {
					want = append(want, r.id)
				}
			}
			var got []int64
			after := ""
			for page := 0; ; page++ {
				p, total, err := f.svc.Orders(ctx, tc, 7, after, true)
				if err != nil {
					t.Fatalf("%+v: %v", tc, err)
				}
				if total != len(want) {
					t.Errorf("%+v page %d: totalCount %d, want %d", tc, page, total, len(want))
				}
				for _, o := range p.Orders {
					got = append(got, o.ID)
				}
				if !p.HasNextPage {
					break
				}
				if len(p.Orders) != 7 || page > 50 {
					t.Fatalf("%+v page %d: %d orders and a next page", tc, page, len(p.Orders))
				}
				after = Cursor(p.Orders[len(p.Orders)-1].ID)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%+v: %d orders %v, want %d %v", tc, len(got), got, len(want), want)
			}
		}
		if _, _, err := f.svc.Orders(ctx, OrderFilter{Statuses: []enums.OrderStatus{"LOST"}}, 5, "", false); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("an unknown status: %v", err)
		}
		if _, _, err := f.svc.Orders(ctx, OrderFilter{}, 5, "bad", false); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("a bad cursor: %v", err)
		}
	})
}

// bring takes a new order o (UNPAID, shipping somewhere) to status st the
// way the shop would.
func (f *shipFixture) bring(t *testing.T, o *Order, st enums.OrderStatus) {
	t.Helper()
	ctx := context.Background()
	pay := func() {
		f.pay(t, o.ID, Payer{ID: o.ID, Provider: "mock", PaymentID: "p-" + o.OrderSn, Amount: o.Amount})
	}
	ship := func(lines ...ShipLine) {
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T", Lines: lines}); err != nil {
			t.Fatal(err)
		}
	}
	switch st {
	case enums.OrderPaid:
		pay()
	case enums.OrderPartiallyShipped:
		pay()
		ship(ShipLine{ItemID: o.Lines[0].ItemID, Quantity: 1})
	case enums.OrderShipped:
		pay()
		ship()
	case enums.OrderCompleted:
		pay()
		ship()
		if _, err := f.svc.ConfirmReceipt(ctx, o.UserID, o.OrderSn); err != nil {
			t.Fatal(err)
		}
	case enums.OrderClosed:
		if _, err := f.svc.CancelOrder(ctx, o.UserID, false, o.OrderSn); err != nil {
			t.Fatal(err)
		}
	case enums.OrderRefunded:
		pay()
		err := store.WithTx(ctx, f.db, func(ctx context.Context, tx *ent.Tx) error {
			_, err := CloseTx(ctx, tx, o.ID, Refund, f.svc.now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}
