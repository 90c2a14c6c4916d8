package checkout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/order"
	entoutbox "storefront/ent/outbox"
	"storefront/ent/sku"
	"storefront/ent/usercoupon"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// newCoupon creates a coupon of 10.00 off, its other terms from edit.
func newCoupon(t *testing.T, ps *promo.Service, edit func(*promo.CreateInput)) *promo.Coupon {
	t.Helper()
	in := promo.CreateInput{Name: "满百减十", Kind: enums.CouponAmountOff, AmountOff: new(money.MustParse("10.00")), ValidDays: 7}
	if edit != nil {
		edit(&in)
	}
	c, err := ps.Create(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The claim races: 1,000 customers (64 at a time) claim a coupon
// of 100 → exactly 100 user coupons, claimed = 100, every other answer
// COUPON_SOLD_OUT; one customer with a limit of 2 claims 20 times at once
// → exactly 2.
func TestCouponClaimsNeverPassTheirLimits(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		ps := promo.New(db)
		c := newCoupon(t, ps, func(in *promo.CreateInput) { in.TotalQuantity = new(int64(100)) })
		var ok, soldOut atomic.Int64
		race(1000, 64, func(i int) {
			_, err := ps.ClaimCoupon(ctx, fmt.Sprintf("u%04d", i), &c.ID, nil)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, promo.ErrCouponSoldOut):
				soldOut.Add(1)
			default:
				t.Errorf("claim %d: %v", i, err)
			}
		})
		rows, err := db.Client.UserCoupon.Query().Where(usercoupon.CouponID(c.ID)).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		after, _ := ps.Get(ctx, c.ID)
		if ok.Load() != 100 || soldOut.Load() != 900 || rows != 100 || after.Claimed != 100 {
			t.Errorf("%d claimed, %d sold out, %d user coupons, claimed counter %d; want 100, 900, 100, 100", ok.Load(), soldOut.Load(), rows, after.Claimed)
		}

		two := newCoupon(t, ps, func(in *promo.CreateInput) { in.PerCustomerLimit = new(int64(2)) })
		var mine, limited atomic.Int64
		race(20, 20, func(int) {
			_, err := ps.ClaimCoupon(ctx, "alice", &two.ID, nil)
			switch {
			case err == nil:
				mine.Add(1)
			case errors.Is(err, promo.ErrCouponLimitExceeded):
				limited.Add(1)
			default:
				t.Errorf("claim: %v", err)
			}
		})
		rows, _ = db.Client.UserCoupon.Query().Where(usercoupon.CouponID(two.ID), usercoupon.UserID("alice")).Count(ctx)
		if mine.Load() != 2 || limited.Load() != 18 || rows != 2 {
			t.Errorf("one customer, limit 2: %d claimed, %d refused, %d rows; want 2, 18, 2", mine.Load(), limited.Load(), rows)
		}
	})
}

// One user coupon, 20 orders at once → exactly one carries the discount,
// the others COUPON_NOT_APPLICABLE; then 10 cancels and the timeout closer
// at once give it back once; a new order uses it; payment makes it USED.
// On the plain path (each order claims it) and the group path (a batch
// takes one order's claim of it and its guard refuses a stale read).
func TestCouponOneOrderAtATime(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		ps := promo.New(db)
		item := f.skuID(t, "黑色,L")
		row, err := db.Client.Sku.Get(ctx, item)
		if err != nil {
			t.Fatal(err)
		}
		// Two units meet the threshold, one does not.
		c := newCoupon(t, ps, func(in *promo.CreateInput) { in.MinSubtotal = new(row.SellPrice + 1) })
		uc, err := ps.ClaimCoupon(ctx, "alice", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		f.advance(2 * time.Second) // past the claim's validFrom (real clock)
		var placed []*Order
		var mu sync.Mutex
		var refused atomic.Int64
		race(20, 20, func(i int) {
			o, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 2)}, UserCouponID: &uc.ID, IdempotencyKey: "k" + itoa(int64(i))})
			switch {
			case err == nil:
				mu.Lock()
				placed = append(placed, o)
				mu.Unlock()
			case errors.Is(err, promo.ErrCouponNotApplicable):
				refused.Add(1)
			default:
				t.Errorf("order %d: %v", i, err)
			}
		})
		if len(placed) != 1 || refused.Load() != 19 {
			t.Fatalf("%d orders, %d refused; want 1, 19", len(placed), refused.Load())
		}
		o := placed[0]
		if o.Discount != money.MustParse("10.00") || o.Amount != o.Subtotal-o.Discount || o.UserCouponID != uc.ID {
			t.Errorf("order: subtotal %s discount %s amount %s coupon %d", o.Subtotal, o.Discount, o.Amount, o.UserCouponID)
		}
		var ev struct {
			Discount     string `json:"discount"`
			UserCouponID string `json:"userCouponId"`
		}
		placedRow, err := db.Client.Outbox.Query().Where(entoutbox.AggregateID(o.OrderSn), entoutbox.Type(EventOrderPlaced)).Only(ctx)
		if err != nil || json.Unmarshal([]byte(placedRow.Payload), &ev) != nil || ev.Discount != "10.00" || ev.UserCouponID != itoa(uc.ID) {
			t.Errorf("OrderPlaced's data: %+v (%v), want the discount 10.00 and user coupon %d", ev, err, uc.ID)
		}
		if st := statusOf(t, db, uc.ID); st != enums.CouponLocked {
			t.Errorf("after the order: %s, want LOCKED", st)
		}
		discounted, _ := db.Client.Order.Query().Where(order.DiscountGT(0)).Count(ctx)
		if discounted != 1 {
			t.Errorf("%d orders carry a discount, want 1", discounted)
		}

		f.advance(DefaultConfig().OrderTTL + time.Minute)
		var wg sync.WaitGroup
		for range 10 {
			wg.Go(func() {
				if _, err := f.svc.CancelOrder(ctx, "alice", false, o.OrderSn); err != nil && !errors.Is(err, ErrInvalidOrderState) {
					t.Errorf("cancel: %v", err)
				}
			})
		}
		wg.Go(func() {
			if _, err := f.svc.CloseExpired(ctx); err != nil {
				t.Errorf("closer: %v", err)
			}
		})
		wg.Wait()
		if st := statusOf(t, db, uc.ID); st != enums.CouponAvailable {
			t.Fatalf("after the close: %s, want AVAILABLE", st)
		}
		again, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 2)}, UserCouponID: &uc.ID, IdempotencyKey: "again"})
		if err != nil || again.Discount == 0 {
			t.Fatalf("the coupon given back, a new order: %v (discount %v)", err, again)
		}
		err = store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			_, err := PayTx(ctx, tx, again.ID, Payer{ID: 1, Provider: "mock", PaymentID: "p1", Amount: again.Amount}, f.svc.now())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		after, _ := ps.Get(ctx, c.ID)
		if st := statusOf(t, db, uc.ID); st != enums.CouponUsed || after.Used != 1 {
			t.Errorf("after payment: %s, used %d; want USED, 1", st, after.Used)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 2)}, UserCouponID: &uc.ID, IdempotencyKey: "third"}); !errors.Is(err, promo.ErrCouponNotApplicable) {
			t.Errorf("a used coupon: %v, want COUPON_NOT_APPLICABLE", err)
		}
		// Not the caller's, and below the threshold.
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "bob", Items: []ItemInput{one(item, 2)}, UserCouponID: &uc.ID}); !errors.Is(err, promo.ErrCouponNotApplicable) {
			t.Errorf("another customer's coupon: %v, want COUPON_NOT_APPLICABLE", err)
		}
		if diffs, err := ps.Reconcile(ctx); err != nil || len(diffs) != 0 {
			t.Errorf("reconcile: %v %v, want no difference", diffs, err)
		}
		bobs, err := ps.ClaimCoupon(ctx, "bob", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "bob", Items: []ItemInput{one(item, 1)}, UserCouponID: &bobs.ID}); !errors.Is(err, promo.ErrCouponNotApplicable) {
			t.Errorf("below the threshold: %v, want COUPON_NOT_APPLICABLE", err)
		}
	})
}

func statusOf(t *testing.T, db *store.DB, id int64) enums.UserCouponStatus {
	t.Helper()
	uc, err := db.Client.UserCoupon.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return uc.Status
}

// purchaseLimit 2, one customer, 20 orders of 1 at once → exactly 2
// stand; cancelling one lets exactly one more through: on the plain path
// (the counter after the stock's CAS) and on the group path (the batch
// decides from the counts read and its guarded counter checks them).
func TestPurchaseLimitUnderConcurrency(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		bag := f.ids[demo.BagCode]
		if err := db.Client.Goods.UpdateOneID(bag).SetPurchaseLimit(2).Exec(ctx); err != nil {
			t.Fatal(err)
		}
		item, err := db.Client.Sku.Query().Where(sku.GoodsID(bag)).FirstID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		orders := func(n int) (stood []*Order) {
			var mu sync.Mutex
			race(n, n, func(i int) {
				o, err := f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: fmt.Sprint(time.Now().UnixNano(), i)})
				switch {
				case err == nil:
					mu.Lock()
					stood = append(stood, o)
					mu.Unlock()
				case errors.Is(err, promo.ErrPurchaseLimit):
				default:
					t.Errorf("order %d: %v", i, err)
				}
			})
			return stood
		}
		stood := orders(20)
		if len(stood) != 2 {
			t.Fatalf("%d orders stand, want 2", len(stood))
		}
		if _, err := f.svc.CancelOrder(ctx, "alice", false, stood[0].OrderSn); err != nil {
			t.Fatal(err)
		}
		if more := orders(20); len(more) != 1 {
			t.Fatalf("after a cancel, %d more orders stand, want 1", len(more))
		}
		_, err = f.svc.Place(ctx, PlaceInput{UserID: "alice", Items: []ItemInput{one(item, 1)}, IdempotencyKey: "last"})
		if !errors.Is(err, promo.ErrPurchaseLimit) || !errors.Is(err, errs.Conflict) {
			t.Errorf("past the limit: %v, want PURCHASE_LIMIT_EXCEEDED", err)
		}
		t.Log(err)
		if other, err := f.svc.Place(ctx, PlaceInput{UserID: "bob", Items: []ItemInput{one(item, 2)}}); err != nil || other == nil {
			t.Errorf("another customer: %v", err)
		}
		reconciles(t, db, bag)
	})
}

// reconciles checks that promo.Reconcile finds the counters true, then
// that it reports a purchase count made false (goods).
func reconciles(t *testing.T, db *store.DB, goods int64) {
	t.Helper()
	ctx := context.Background()
	if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) != 0 {
		t.Fatalf("reconcile: %v %v, want no difference", diffs, err)
	}
	if _, err := db.SQL.ExecContext(ctx, "UPDATE purchase_count SET units = units + 1 WHERE goods_id = ?", goods); err != nil {
		t.Fatal(err)
	}
	if diffs, err := promo.New(db).Reconcile(ctx); err != nil || len(diffs) == 0 {
		t.Errorf("reconcile after a counter was changed by hand: %v %v, want it reported", diffs, err)
	}
}

// A batch decides from a plain read of its coupons; one locked by another
// order between that read and the batch's statement is refused there (the
// claim's guard), and the batch runs again without it: the others are
// placed, that one is COUPON_NOT_APPLICABLE, and the coupon stays the
// other order's.
func TestCouponTakenBetweenTheBatchsReadAndItsLock(t *testing.T) {
	testdb.EachServer(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"group", true})
		ps := promo.New(db)
		item := f.skuID(t, "黑色,L")
		c := newCoupon(t, ps, nil)
		alices, err := ps.ClaimCoupon(ctx, "alice", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		bobs, err := ps.ClaimCoupon(ctx, "bob", &c.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The claims ran on the real clock; the orders run on the
		// fixture's, set before them: move it past their validFrom.
		f.advance(2 * time.Second)
		var once sync.Once
		f.svc.hook = func(stage string) error {
			if stage == "unlocked" {
				once.Do(func() {
					// Another order takes alice's coupon, committed on another connection.
					if err := db.Client.UserCoupon.UpdateOneID(alices.ID).SetStatus(enums.CouponLocked).SetOrderSn("elsewhere").Exec(ctx); err != nil {
						t.Error(err)
					}
				})
			}
			return nil
		}
		hold(f, item)
		orders, errs := enqueue(t, f, item, []PlaceInput{
			{UserID: "carol", Items: []ItemInput{one(item, 1)}, IdempotencyKey: "c"},
			{UserID: "alice", Items: []ItemInput{one(item, 1)}, UserCouponID: &alices.ID, IdempotencyKey: "a"},
			{UserID: "bob", Items: []ItemInput{one(item, 1)}, UserCouponID: &bobs.ID, IdempotencyKey: "b"},
		})()
		checkOutcomes(t, orders, errs, nil, promo.ErrCouponNotApplicable, nil)
		if o := orders[2]; o.Discount == 0 || o.UserCouponID != bobs.ID {
			t.Errorf("bob's order: discount %s coupon %d, want a discount with coupon %d", o.Discount, o.UserCouponID, bobs.ID)
		}
		a, _ := db.Client.UserCoupon.Get(ctx, alices.ID)
		b, _ := db.Client.UserCoupon.Get(ctx, bobs.ID)
		sn := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		if a.Status != enums.CouponLocked || sn(a.OrderSn) != "elsewhere" || b.Status != enums.CouponLocked || sn(b.OrderSn) != orders[2].OrderSn {
			t.Errorf("alice's coupon %s by %q, bob's %s by %q; want both LOCKED, by elsewhere and %s", a.Status, sn(a.OrderSn), b.Status, sn(b.OrderSn), orders[2].OrderSn)
		}
		if n, _ := db.Client.Order.Query().Where(order.DiscountGT(0)).Count(ctx); n != 1 {
			t.Errorf("%d orders carry a discount, want 1", n)
		}
	})
}
