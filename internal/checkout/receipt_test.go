package checkout

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Ten confirmations of receipt race two instances' closers, each of which
// finds the order shipped longer ago than AutoConfirm: the order completes
// once, with one OrderCompleted, whoever wins.
func TestReceiptRace(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		blackL := f.skuID(t, "黑色,L")
		other := New(db, f.svc.cfg) // a second instance's closer
		other.now = f.svc.now
		for round := range 4 {
			o := f.paid(t, "u1", to, one(blackL, 1))
			if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T"}); err != nil {
				t.Fatal(err)
			}
			f.advance(f.svc.cfg.AutoConfirm + time.Second)
			var (
				wg             sync.WaitGroup
				confirmed, bys atomic.Int64
			)
			for range 10 {
				wg.Go(func() {
					_, err := f.svc.ConfirmReceipt(ctx, "u1", o.OrderSn)
					switch {
					case err == nil:
						confirmed.Add(1)
					case !errors.Is(err, ErrInvalidOrderState):
						t.Errorf("confirmReceipt: %v", err)
					}
				})
			}
			for _, s := range []*Service{f.svc, other} {
				wg.Go(func() {
					n, err := s.CompleteShipped(ctx)
					if err != nil {
						t.Error(err)
					}
					bys.Add(int64(n))
				})
			}
			wg.Wait()
			got := f.order(t, o.OrderSn)
			if got.Status != enums.OrderCompleted || got.CompletedAt == nil || confirmed.Load()+bys.Load() != 1 || f.eventsOfOrder(t, EventOrderCompleted, o.OrderSn) != 1 {
				t.Errorf("round %d: %s, %d confirmations and %d by the closers won, %d OrderCompleted; want COMPLETED once",
					round, got.Status, confirmed.Load(), bys.Load(), f.eventsOfOrder(t, EventOrderCompleted, o.OrderSn))
			}
		}
	})
}

// Only the buyer confirms, only a SHIPPED order, and the closer leaves an
// order shipped less than AutoConfirm ago alone.
func TestConfirmReceiptRules(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		o := f.paid(t, "u1", to, one(f.skuID(t, "黑色,L"), 2))
		if _, err := f.svc.ConfirmReceipt(ctx, "u1", o.OrderSn); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a paid order's receipt: %v", err)
		}
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T", Lines: []ShipLine{{ItemID: f.skuID(t, "黑色,L"), Quantity: 1}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.ConfirmReceipt(ctx, "u1", o.OrderSn); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("a partly shipped order's receipt: %v", err)
		}
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T2"}); err != nil {
			t.Fatal(err)
		}
		f.advance(f.svc.cfg.AutoConfirm - time.Minute)
		if n, err := f.svc.CompleteShipped(ctx); err != nil || n != 0 {
			t.Errorf("the closer before AutoConfirm: %d, %v", n, err)
		}
		if _, err := f.svc.ConfirmReceipt(ctx, "u2", o.OrderSn); !errors.Is(err, errs.Forbidden) {
			t.Errorf("someone else's confirmation: %v", err)
		}
		if got, err := f.svc.ConfirmReceipt(ctx, "u1", o.OrderSn); err != nil || got.Status != enums.OrderCompleted {
			t.Errorf("the buyer's confirmation: %+v, %v", got, err)
		}
		f.advance(time.Hour)
		if n, err := f.svc.CompleteShipped(ctx); err != nil || n != 0 {
			t.Errorf("the closer after the buyer: %d, %v", n, err)
		}
	})
}

// Automatic receipt counts from the shipment, not from the order: an order
// placed long ago and shipped just now waits AutoConfirm from its shipment.
func TestAutoReceiptCountsFromTheShipment(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setupShipping(t, setup(t, db))
		to := f.addr(t, "u1", "310104")
		o := f.paid(t, "u1", to, one(f.skuID(t, "黑色,L"), 1))
		f.advance(2 * f.svc.cfg.AutoConfirm)
		if _, err := f.svc.Ship(ctx, ShipInput{OrderSn: o.OrderSn, Carrier: "SF", TrackingNo: "T"}); err != nil {
			t.Fatal(err)
		}
		f.advance(f.svc.cfg.AutoConfirm - time.Minute)
		if n, err := f.svc.CompleteShipped(ctx); err != nil || n != 0 {
			t.Errorf("an order shipped less than AutoConfirm ago, placed long before: %d completed, %v", n, err)
		}
		f.advance(2 * time.Minute)
		if n, err := f.svc.CompleteShipped(ctx); err != nil || n != 1 {
			t.Errorf("past AutoConfirm from its shipment: %d completed, %v", n, err)
		}
	})
}
