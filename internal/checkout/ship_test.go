package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/shipment"
	"storefront/internal/platform/store"
	"storefront/internal/shipping"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// Twenty admins ship the same paid order at once, on every backend: the
// units shipped never pass the units ordered, every shipment is a row and
// one OrderShipped event, and the order turns SHIPPED once.
func TestShipOrderRace(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		blackL, whiteM := f.skuID(t, "黑色,L"), f.skuID(t, "白色,M")
		for _, tc := range []struct {
			name string
			ship func(i int) ShipInput // the i-th racer's shipment of order sn
		}{
			// Everyone ships everything left: one shipment carries it all.
			{"everything", func(int) ShipInput { return ShipInput{} }},
			// One unit each of a line of 10 and of 5: 15 shipments win.
			{"one unit each", func(i int) ShipInput {
				return ShipInput{Lines: []ShipLine{{ItemID: []int64{blackL, whiteM}[i%2], Quantity: 1}}}
			}},
			// Mixed: units of each line, and some ship everything left.
			{"mixed", func(i int) ShipInput {
				switch i % 4 {
				case 0:
					return ShipInput{}
				case 1:
					return ShipInput{Lines: []ShipLine{{ItemID: blackL, Quantity: 3}, {ItemID: whiteM, Quantity: 1}}}
				}
				return ShipInput{Lines: []ShipLine{{ItemID: blackL, Quantity: 2}}}
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				o := f.paid(t, "u1", to, one(blackL, 10), one(whiteM, 5))
				var (
					wg    sync.WaitGroup
					mu    sync.Mutex
					won   int
					codes = map[string]int{}
				)
				for i := range 20 {
					wg.Go(func() {
						in := tc.ship(i)
						in.OrderSn, in.Carrier, in.TrackingNo = o.OrderSn, "SF", fmt.Sprint("SF", i)
						_, err := f.svc.Ship(ctx, in)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							won++
						case errors.Is(err, ErrInvalidOrderState):
							codes["INVALID_ORDER_STATE"]++
						case errors.Is(err, ErrInvalidInput):
							codes["INVALID_INPUT"]++
						default:
							t.Errorf("shipment %d: %v", i, err)
						}
					})
				}
				wg.Wait()
				got := f.order(t, o.OrderSn)
				rows, err := db.Client.Shipment.Query().Where(shipment.OrderID(o.ID)).All(ctx)
				if err != nil {
					t.Fatal(err)
				}
				shipped := map[int64]int64{}
				for _, r := range rows {
					for _, l := range r.Lines {
						shipped[l.ItemID] += l.Quantity
					}
				}
				for _, l := range got.Lines {
					if l.ShippedQuantity != l.Quantity || shipped[l.ItemID] != l.Quantity {
						t.Errorf("SKU %d: %d ordered, line says %d shipped, shipments carry %d", l.ItemID, l.Quantity, l.ShippedQuantity, shipped[l.ItemID])
					}
				}
				evs := f.shippedEvents(t, o.OrderSn)
				toShipped := 0
				for _, e := range evs {
					if e.Status == string(enums.OrderShipped) {
						toShipped++
					}
				}
				if got.Status != enums.OrderShipped || got.ShippedAt == nil || len(rows) != won || len(evs) != won || toShipped != 1 {
					t.Errorf("%s: %d won (%v), %d shipment rows, %d OrderShipped events (%d to SHIPPED); want each shipment once and SHIPPED once",
						got.Status, won, codes, len(rows), len(evs), toShipped)
				}
				if tc.name == "everything" && won != 1 || tc.name == "one unit each" && won != 15 {
					t.Errorf("%d shipments won", won)
				}
			})
		}
	})
}

// Shipping's refusals, each changing nothing.
func TestShipOrderRefusals(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		blackL := f.skuID(t, "黑色,L")
		unpaid, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 2)}, AddressID: &to, IdempotencyKey: newKey()})
		if err != nil {
			t.Fatal(err)
		}
		nowhere, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		f.pay(t, nowhere.ID, Payer{ID: nowhere.ID, Provider: "mock", PaymentID: "x", Amount: nowhere.Amount})
		paid := f.paid(t, "u1", to, one(blackL, 2))
		ship := func(sn string, lines ...ShipLine) error {
			_, err := f.svc.Ship(ctx, ShipInput{OrderSn: sn, Carrier: "SF", TrackingNo: "SF1", Lines: lines})
			return err
		}
		before := f.counts(t)
		for _, tc := range []struct {
			name string
			err  error
			want error
		}{
			{"an unpaid order", ship(unpaid.OrderSn), ErrInvalidOrderState},
			{"no address", ship(nowhere.OrderSn), shipping.ErrAddressRequired},
			{"more than ordered", ship(paid.OrderSn, ShipLine{ItemID: blackL, Quantity: 3}), ErrInvalidInput},
			{"a SKU not in the order", ship(paid.OrderSn, ShipLine{ItemID: f.skuID(t, "白色,M"), Quantity: 1}), ErrInvalidInput},
			{"no units", ship(paid.OrderSn, ShipLine{ItemID: blackL, Quantity: 0}), ErrInvalidInput},
			{"a SKU twice", ship(paid.OrderSn, ShipLine{ItemID: blackL, Quantity: 1}, ShipLine{ItemID: blackL, Quantity: 1}), ErrInvalidInput},
			{"unknown order", ship("nope"), ErrNotFound},
		} {
			if !errors.Is(tc.err, tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
			}
		}
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: paid.OrderSn, Carrier: " ", TrackingNo: "x"}); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("a blank carrier: %v", err)
		}
		if after := f.counts(t); fmt.Sprint(after) != fmt.Sprint(before) || f.count(t, "shipment") != 0 {
			t.Errorf("refusals wrote: %v → %v, %d shipments", before, after, f.count(t, "shipment"))
		}
		if o := f.order(t, paid.OrderSn); o.Status != enums.OrderPaid || o.Lines[0].ShippedQuantity != 0 {
			t.Errorf("after refusals the paid order is %s with %d shipped", o.Status, o.Lines[0].ShippedQuantity)
		}
	})
}

// A shipment never races a cancel, a timeout close or a refund into both:
// an order that closes is never shipped, a shipped one never closes.
func TestShipmentNeverRacesACloseIntoBoth(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		blackL := f.skuID(t, "黑色,L")
		const n = 8

		// Unpaid orders: cancels and the timeout closer race shipments.
		var unpaid []*Order
		for range n {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 1)}, AddressID: &to, IdempotencyKey: newKey()})
			if err != nil {
				t.Fatal(err)
			}
			unpaid = append(unpaid, o)
		}
		f.advance(f.svc.cfg.OrderTTL + time.Second)
		var wg sync.WaitGroup
		for i, o := range unpaid {
			wg.Go(func() {
				if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T"}); !errors.Is(err, ErrInvalidOrderState) {
					t.Errorf("shipping unpaid order %s: %v", o.OrderSn, err)
				}
			})
			if i%2 == 0 {
				wg.Go(func() { _, _ = f.svc.CancelOrder(ctx, "u1", false, o.OrderSn) })
			}
		}
		wg.Go(func() {
			if _, err := f.svc.CloseExpired(ctx); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		// A claim passes over an order a refused shipment still held (MySQL
		// keeps the lock of a row its UPDATE read to the end of the
		// transaction): the next pass closes it.
		if _, err := f.svc.CloseExpired(ctx); err != nil {
			t.Fatal(err)
		}
		for _, o := range unpaid {
			if got := f.order(t, o.OrderSn); got.Status != enums.OrderClosed || got.Lines[0].ShippedQuantity != 0 {
				t.Errorf("order %s: %s with %d shipped, want CLOSED with none", o.OrderSn, got.Status, got.Lines[0].ShippedQuantity)
			}
		}

		// Paid orders: a refund races a shipment; one of them wins.
		var paid []*Order
		for range n {
			paid = append(paid, f.paid(t, "u1", to, one(blackL, 2)))
		}
		for _, o := range paid {
			wg.Go(func() { _, _ = f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T"}) })
			wg.Go(func() {
				err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
					_, err := CloseTx(ctx, tx, o.ID, Refund, f.svc.now())
					return err
				})
				if err != nil {
					t.Errorf("refund of %s: %v", o.OrderSn, err)
				}
			})
		}
		wg.Wait()
		for _, o := range paid {
			got := f.order(t, o.OrderSn)
			rows, _ := db.Client.Shipment.Query().Where(shipment.OrderID(o.ID)).Count(ctx)
			switch {
			case got.Status == enums.OrderRefunded && rows == 0 && got.Lines[0].ShippedQuantity == 0:
			case got.Status == enums.OrderShipped && rows == 1 && f.eventsOfOrder(t, EventOrderRefunded, o.OrderSn) == 0:
			default:
				t.Errorf("order %s: %s with %d shipments", o.OrderSn, got.Status, rows)
			}
		}

		// A shipped order is not cancelled, nor closed by the closer.
		s := f.paid(t, "u1", to, one(blackL, 1))
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: s.OrderSn, Carrier: "SF", TrackingNo: "T"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u1", false, s.OrderSn); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("cancelling a shipped order: %v", err)
		}
		f.advance(f.svc.cfg.OrderTTL + time.Second)
		if _, err := f.svc.CloseExpired(ctx); err != nil {
			t.Fatal(err)
		}
		if got := f.order(t, s.OrderSn); got.Status != enums.OrderShipped {
			t.Errorf("a shipped order past the TTL is %s", got.Status)
		}
	})
}
