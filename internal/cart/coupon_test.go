package cart

import (
	"context"
	"testing"
	"time"

	"storefront/ent/cart"
	"storefront/ent/sku"
	"storefront/internal/checkout"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/internal/promo"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// couponFixture claims coupons as promo does for customers.
type couponFixture struct {
	*fixture
	promo *promo.Service
}

func (f *couponFixture) coupon(t *testing.T, in promo.CreateInput) *promo.Coupon {
	t.Helper()
	if in.ValidDays == 0 {
		in.ValidDays = 30
	}
	c, err := f.promo.Create(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (f *couponFixture) claim(t *testing.T, user string, c *promo.Coupon) int64 {
	t.Helper()
	uc, err := f.promo.ClaimCoupon(context.Background(), user, &c.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	return uc.ID
}

func (f *couponFixture) sku(t *testing.T, code string) int64 {
	t.Helper()
	id, err := f.db.Client.Sku.Query().Where(sku.GoodsID(f.ids[code])).Order(sku.ByID()).FirstID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f *couponFixture) price(t *testing.T, id int64) money.Money {
	t.Helper()
	s, err := f.db.Client.Sku.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return s.SellPrice
}

// couponWarnings are c's COUPON_NOT_APPLICABLE warnings (which name no line).
func couponWarnings(t *testing.T, c *Cart) []*Warning {
	t.Helper()
	var out []*Warning
	for _, w := range c.Warnings {
		if w.Code == WarnCouponNotApplicable {
			if w.LineID != nil {
				t.Errorf("coupon warning names line %d", *w.LineID)
			}
			out = append(out, w)
		}
	}
	return out
}

func wantDiscount(t *testing.T, c *Cart, want money.Money, warned bool) {
	t.Helper()
	if c.Cost.Discount != want {
		t.Errorf("cost.discount = %s, want %s", c.Cost.Discount, want)
	}
	// The discount is the cost's one COUPON adjustment, its shares summing
	// to it; none without a discount.
	var adj money.Money
	for _, a := range c.Cost.Adjustments {
		var shares money.Money
		for _, l := range a.Lines {
			shares += l.Amount
		}
		if a.Kind != enums.AdjustCoupon || a.SourceID != c.UserCouponID() || shares != a.Amount {
			t.Errorf("cost adjustment %+v: want the cart's coupon %d, shares summing to its amount", a, c.UserCouponID())
		}
		adj -= a.Amount
	}
	if adj != want || (want == 0) != (len(c.Cost.Adjustments) == 0) {
		t.Errorf("cost.adjustments %+v, want one of -%s", c.Cost.Adjustments, want)
	}
	if w := couponWarnings(t, c); len(w) > 0 != warned {
		t.Errorf("coupon warnings %v, want warned=%v", w, warned)
	}
}

// A cart shows its chosen coupon's discount exactly as its order gets it
// (a percent of the one goods in scope, rounded half up), 0.00 with a
// COUPON_NOT_APPLICABLE warning whenever it stops applying (threshold
// unmet, no line in scope, expired, locked by another order), and its
// checkout uses that coupon when checkoutCart names none.
func TestCartCoupon(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := &couponFixture{fixture: setup(t, db), promo: promo.New(db)}
		shirt, bag := f.tshirt(t, "黑色,L"), f.sku(t, demo.BagCode)
		shirtPrice := f.price(t, shirt)
		// 15% of the shirts, at least 2 of them: the threshold is over the
		// lines in scope, the bag does not count.
		pct := 15
		min := shirtPrice * 2
		off := f.coupon(t, promo.CreateInput{Name: "15% off shirts", Kind: enums.CouponPercentOff, PercentOff: &pct,
			MinSubtotal: &min, GoodsIDs: []int64{f.ids[demo.TShirtCode]}})
		mine, theirs := f.claim(t, "alice", off), f.claim(t, "bob", off)
		f.advance(time.Minute) // the fixture's clock began before the claims

		c := f.ok(f.svc.Create(ctx, "alice", []LineInput{item(shirt, 3), item(bag, 1)}))
		version := f.version(t, c.ID)

		// Someone else's coupon, or none at all: refused, nothing changes.
		for _, id := range []int64{theirs, 1 << 40} {
			_, err := f.svc.SetCoupon(ctx, "alice", c.ID, &id)
			wantErr(t, err, promo.ErrCouponNotApplicable)
		}
		if v := f.version(t, c.ID); v != version {
			t.Fatalf("a refused coupon changed the cart: version %d → %d", version, v)
		}
		// Anonymous callers and anonymous carts have no coupons.
		anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(shirt, 1)}))
		_, err := f.svc.SetCoupon(ctx, "", anon.ID, &mine)
		wantErr(t, err, errs.Unauthenticated)
		_, err = f.svc.SetCoupon(ctx, "alice", anon.ID, &mine)
		wantErr(t, err, errs.Forbidden)

		c = f.ok(f.svc.SetCoupon(ShowingPrices(ctx, true), "alice", c.ID, &mine))
		// 15% of 3 shirts, half up: (x·15 + 50) / 100 in minor units.
		want := (shirtPrice*3*15 + 50) / 100
		wantDiscount(t, c, want, false)
		if c.UserCouponID() != mine {
			t.Fatalf("cart's coupon = %d, want %d", c.UserCouponID(), mine)
		}
		wantDiscount(t, f.read(t, "alice", c.ID), want, false)

		// One shirt is below the threshold: 0.00 and a warning; two meet it.
		c = f.ok(f.svc.UpdateLines(ctx, "alice", c.ID, []LineUpdate{{LineID: c.Lines[0].ID, Quantity: 1}}))
		wantDiscount(t, c, 0, true)
		c = f.ok(f.svc.UpdateLines(ctx, "alice", c.ID, []LineUpdate{{LineID: c.Lines[0].ID, Quantity: 2}}))
		wantDiscount(t, c, (shirtPrice*2*15+50)/100, false)
		// No line in its scope.
		shirtLine := c.Lines[0].ID
		c = f.ok(f.svc.RemoveLines(ctx, "alice", c.ID, []int64{shirtLine}))
		wantDiscount(t, c, 0, true)
		c = f.ok(f.svc.AddLines(ctx, "alice", c.ID, []LineInput{item(shirt, 3)}))
		wantDiscount(t, c, want, false)

		// Locked by another order of alice's: not AVAILABLE any more.
		other, err := f.co.Place(ctx, checkout.PlaceInput{UserID: "alice", IdempotencyKey: "other-order",
			Items: []checkout.ItemInput{{ItemID: &shirt, Quantity: 2}}, UserCouponID: &mine})
		if err != nil {
			t.Fatal(err)
		}
		wantDiscount(t, f.read(t, "alice", c.ID), 0, true)
		_, err = f.svc.Checkout(ctx, "alice", c.ID, "")
		wantErr(t, err, promo.ErrCouponNotApplicable)
		if r := f.read(t, "alice", c.ID); r.Status != enums.CartOpen {
			t.Fatalf("a refused coupon completed the cart: %s", r.Status)
		}
		// Its cancel gives it back, and the cart's discount with it.
		if _, err := f.co.CancelOrder(ctx, "alice", false, other.OrderSn); err != nil {
			t.Fatal(err)
		}
		wantDiscount(t, f.read(t, "alice", c.ID), want, false)

		// Cleared: no discount, no warning; chosen again.
		wantDiscount(t, f.ok(f.svc.SetCoupon(ctx, "alice", c.ID, nil)), 0, false)
		c = f.ok(f.svc.SetCoupon(ctx, "alice", c.ID, &mine))

		// checkoutCart without a coupon uses the cart's: the order's
		// discount is the cart's, to the cent, and the coupon is LOCKED by it.
		o, err := f.svc.Checkout(ctx, "alice", c.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		if o.Discount != want || o.UserCouponID != mine || o.Amount != o.Subtotal-want {
			t.Errorf("order: subtotal %s discount %s amount %s coupon %d; the cart showed %s of coupon %d",
				o.Subtotal, o.Discount, o.Amount, o.UserCouponID, want, mine)
		}
		uc, err := f.promo.UserCoupon(ctx, "alice", mine)
		if err != nil || uc.Status != enums.CouponLocked || uc.OrderSn == nil || *uc.OrderSn != o.OrderSn {
			t.Errorf("user coupon after checkout: %+v, %v", uc, err)
		}
		// A completed cart shows no discount (its order carries it) and no warning.
		wantDiscount(t, f.read(t, "alice", c.ID), 0, false)
	})
}

// An expired coupon stays chosen and warns; checkoutCart's own
// userCouponId wins over the cart's.
func TestCartCouponExpiredAndOverride(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := &couponFixture{fixture: setup(t, db), promo: promo.New(db)}
		shirt := f.tshirt(t, "白色,M")
		amount := money.MustParse("5.00")
		short := f.coupon(t, promo.CreateInput{Name: "a day", Kind: enums.CouponAmountOff, AmountOff: &amount, ValidDays: 1})
		long := f.coupon(t, promo.CreateInput{Name: "a month", Kind: enums.CouponAmountOff, AmountOff: &amount})
		day, month := f.claim(t, "carol", short), f.claim(t, "carol", long)
		f.advance(time.Minute)
		c := f.ok(f.svc.Create(ctx, "carol", []LineInput{item(shirt, 1)}))
		wantDiscount(t, f.ok(f.svc.SetCoupon(ctx, "carol", c.ID, &day)), amount, false)
		f.advance(25 * time.Hour)
		c = f.read(t, "carol", c.ID)
		wantDiscount(t, c, 0, true)
		if c.UserCouponID() != day {
			t.Fatalf("the expired coupon was dropped from the cart: %d", c.UserCouponID())
		}
		o, err := f.svc.CheckoutWith(ctx, "carol", c.ID, "", CheckoutOptions{UserCouponID: &month})
		if err != nil {
			t.Fatal(err)
		}
		if o.UserCouponID != month || o.Discount != amount {
			t.Errorf("order took coupon %d discount %s, want %d and %s", o.UserCouponID, o.Discount, month, amount)
		}
	})
}

// A customer's chosen coupon survives the merge of their cart into the
// anonymous one they sign in with.
func TestCartCouponSurvivesAttach(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := &couponFixture{fixture: setup(t, db), promo: promo.New(db)}
		shirt := f.tshirt(t, "黑色,M")
		amount := money.MustParse("3.00")
		uc := f.claim(t, "dave", f.coupon(t, promo.CreateInput{Name: "3 off", Kind: enums.CouponAmountOff, AmountOff: &amount}))
		f.advance(time.Minute)
		mine := f.ok(f.svc.Create(ctx, "dave", []LineInput{item(shirt, 1)}))
		f.ok(f.svc.SetCoupon(ctx, "dave", mine.ID, &uc))
		anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(shirt, 1)}))
		c := f.ok(f.svc.Attach(ctx, "dave", anon.ID))
		if c.UserCouponID() != uc || c.Cost.Discount != amount {
			t.Fatalf("after sign-in: coupon %d discount %s, want %d and %s", c.UserCouponID(), c.Cost.Discount, uc, amount)
		}
	})
}

func (f *fixture) version(t *testing.T, token string) int64 {
	t.Helper()
	r, err := f.db.Client.Cart.Query().Where(cart.Token(token)).Only(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Version
}

// The customer's own cart expired with a coupon chosen: signing in with an
// anonymous cart deletes it and does not carry its coupon (nor its lines)
// into the cart that lives on.
func TestExpiredCartsCouponNotCarriedAtAttach(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := &couponFixture{fixture: setup(t, db), promo: promo.New(db)}
		shirt := f.tshirt(t, "黑色,M")
		amount := money.MustParse("3.00")
		uc := f.claim(t, "erin", f.coupon(t, promo.CreateInput{Name: "3 off", Kind: enums.CouponAmountOff, AmountOff: &amount}))
		f.advance(time.Minute)
		mine := f.ok(f.svc.Create(ctx, "erin", []LineInput{item(shirt, 2)}))
		f.ok(f.svc.SetCoupon(ctx, "erin", mine.ID, &uc))
		f.advance(f.svc.cfg.TTL + time.Minute)
		anon := f.ok(f.svc.Create(ctx, "", []LineInput{item(shirt, 1)}))
		c := f.ok(f.svc.Attach(ctx, "erin", anon.ID))
		if c.UserCouponID() != 0 || c.Cost.Discount != 0 || quantities(c)[shirt] != 1 {
			t.Errorf("after sign-in: coupon %d, discount %s, %d shirts; want no coupon, 0.00, the anonymous cart's 1", c.UserCouponID(), c.Cost.Discount, quantities(c)[shirt])
		}
		if n, err := db.Client.Cart.Query().Where(cart.Token(mine.ID)).Count(ctx); err != nil || n != 0 {
			t.Errorf("%d rows of the expired cart (%v), want it deleted", n, err)
		}
	})
}
