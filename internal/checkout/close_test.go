package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

func TestCancelOrder(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		blackL, whiteM := f.skuID(t, "黑色,L"), f.skuID(t, "白色,M")
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{one(whiteM, 4), one(blackL, 3)}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u2", false, o.OrderSn); !errors.Is(err, errs.Forbidden) {
			t.Errorf("someone else's cancel: err = %v, want FORBIDDEN", err)
		}
		if _, err := f.svc.CancelOrder(ctx, "u1", false, "nope"); !errors.Is(err, ErrNotFound) {
			t.Errorf("unknown order: err = %v, want NOT_FOUND", err)
		}
		c, err := f.svc.CancelOrder(ctx, "u1", false, o.OrderSn)
		if err != nil || c.Status != enums.OrderClosed {
			t.Fatalf("cancel = %+v, %v", c, err)
		}
		if f.stock(t, blackL) != 200 || f.stock(t, whiteM) != 40 {
			t.Errorf("stock = %d, %d after cancel; want 200, 40", f.stock(t, blackL), f.stock(t, whiteM))
		}
		row, err := db.Client.StockLog.Query().Where(stocklog.BizSn(o.OrderSn), stocklog.ItemID(blackL), stocklog.ChangeType(3)).Only(ctx)
		if err != nil || row.ChangeNum != 3 || row.BeforeStock != 197 || row.AfterStock != 200 || row.BizType != "order" {
			t.Errorf("restore ledger row = %+v, %v; want +3, 197 → 200", row, err)
		}
		if _, err := f.svc.CancelOrder(ctx, "admin", true, o.OrderSn); !errors.Is(err, ErrInvalidOrderState) {
			t.Errorf("second cancel: err = %v, want INVALID_ORDER_STATE", err)
		}
		if n := f.events(t); n != 2 {
			t.Errorf("outbox events = %d, want OrderPlaced + OrderClosed", n)
		}
	})
}

// A repeated restore of the same document is a no-op before stock moves.
func TestRestoreTwiceIsNoOp(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		blackL := f.skuID(t, "黑色,L")
		lines := []inventory.RestoreLine{{ItemID: blackL, GoodsID: 1, Num: 5}}
		for i, want := range []int{1, 0} {
			var n int
			err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
				var err error
				n, err = inventory.Restore(ctx, tx, inventory.CloseRestore, inventory.BizOrder, "SN-1", lines)
				return err
			})
			if err != nil || n != want {
				t.Errorf("restore #%d = %d, %v; want %d", i+1, n, err, want)
			}
		}
		if got := f.stock(t, blackL); got != 205 {
			t.Errorf("stock = %d, want 205 (restored once)", got)
		}
	})
}

// Two timeout closers and a customer's cancel race over the same expired
// orders: each order is closed once and its stock restored once.
func TestClosersAndCancelRace(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		f.svc.cfg.CloseBatch = 7 // several batches
		blackL, whiteS := f.skuID(t, "黑色,L"), f.skuID(t, "白色,S")
		var sns []string
		for i := range 30 {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(blackL, 2), one(whiteS, 1)}})
			if err != nil {
				t.Fatal(err)
			}
			sns = append(sns, o.OrderSn)
		}
		if f.stock(t, blackL) != 140 || f.stock(t, whiteS) != 0 {
			t.Fatalf("stock after placing = %d, %d", f.stock(t, blackL), f.stock(t, whiteS))
		}
		f.advance(f.svc.cfg.OrderTTL + time.Second)
		var wg sync.WaitGroup
		closed := make([]int, 2)
		errs := make(chan error, 64)
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := f.svc.CloseExpired(ctx)
				closed[i] = n
				if err != nil {
					errs <- err
				}
			}()
		}
		cancelled := make([]bool, len(sns))
		for i, sn := range sns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := f.svc.CancelOrder(ctx, fmt.Sprint("u", i), false, sn)
				switch {
				case err == nil:
					cancelled[i] = true
				case !errors.Is(err, ErrInvalidOrderState):
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("racing close: %v", err)
		}
		nCancel := 0
		for _, c := range cancelled {
			if c {
				nCancel++
			}
		}
		if total := closed[0] + closed[1] + nCancel; total != 30 {
			t.Errorf("closers closed %v, cancels %d: total %d, want 30", closed, nCancel, total)
		}
		if f.stock(t, blackL) != 200 || f.stock(t, whiteS) != 30 {
			t.Errorf("stock = %d, %d; want 200, 30 (restored once)", f.stock(t, blackL), f.stock(t, whiteS))
		}
		for _, id := range []int64{blackL, whiteS} {
			if got := f.ledgerSum(t, id, 0); got != f.stock(t, id) {
				t.Errorf("SKU %d: ledger balance %d, stock %d", id, got, f.stock(t, id))
			}
		}
		var restores, unpaid int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM stock_log WHERE change_type = 3").Scan(&restores); err != nil {
			t.Fatal(err)
		}
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM orders WHERE status <> 'CLOSED'").Scan(&unpaid); err != nil {
			t.Fatal(err)
		}
		if restores != 60 || unpaid != 0 {
			t.Errorf("restore rows = %d, open orders = %d; want 60, 0", restores, unpaid)
		}
		if n, err := f.svc.CloseExpired(ctx); n != 0 || err != nil {
			t.Errorf("closer on closed orders = %d, %v; want 0", n, err)
		}
	})
}

func TestDispatchMarksEventsOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		blackL := f.skuID(t, "黑色,L")
		for i := range 3 {
			if _, err := f.svc.Place(ctx, PlaceInput{UserID: fmt.Sprint("u", i), Items: []ItemInput{one(blackL, 1)}}); err != nil {
				t.Fatal(err)
			}
		}
		seen := map[string]bool{}
		sink := func(_ context.Context, e Event) error {
			if seen[e.ID] || e.Type != EventOrderPlaced {
				t.Errorf("event %+v delivered twice or of the wrong type", e)
			}
			seen[e.ID] = true
			return nil
		}
		if n, err := f.svc.Dispatch(ctx, sink, 2); n != 2 || err != nil {
			t.Errorf("Dispatch = %d, %v; want 2", n, err)
		}
		if n, err := f.svc.Dispatch(ctx, sink, 10); n != 1 || err != nil {
			t.Errorf("Dispatch = %d, %v; want 1", n, err)
		}
		if n, _ := f.svc.Dispatch(ctx, sink, 10); n != 0 || len(seen) != 3 {
			t.Errorf("third Dispatch = %d, seen %d; want 0, 3", n, len(seen))
		}
	})
}
