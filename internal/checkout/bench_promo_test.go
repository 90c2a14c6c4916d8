package checkout_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"storefront/ent"
	"storefront/internal/checkout"
	"storefront/internal/promo"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// BenchmarkPlaceOrderPromo measures the hot SKU at 64 clients on the
// default configuration, each order by a buyer of its own: without a
// coupon or limit, with a coupon on every order, and with a purchase limit
// on the goods, all three on the group path (docs/checkout.md "Coupons and
// purchase limits"). One run, so the three compare as ratios
// (docs/benchmarks.md).
func BenchmarkPlaceOrderPromo(b *testing.B) {
	for _, backend := range []testdb.Backend{testdb.MySQL, testdb.Postgres, testdb.SQLite} {
		b.Run(string(backend), func(b *testing.B) {
			db := testdb.Open(b, backend)
			hot := benchSetup(b, db)
			ctx := context.Background()
			svc := benchHandler(b, db, checkout.DefaultConfig()).app.Checkout
			ps := promo.New(db)
			c, err := ps.Create(ctx, promo.CreateInput{Name: "bench", Kind: enums.CouponAmountOff, AmountOff: new(money.MustParse("1.00")), ValidDays: 30})
			if err != nil {
				b.Fatal(err)
			}
			place := func(user string, coupon *int64) error {
				_, err := svc.Place(ctx, checkout.PlaceInput{UserID: user, IdempotencyKey: "k", UserCouponID: coupon,
					Items: []checkout.ItemInput{{ItemID: &hot, Quantity: 1}}})
				return err
			}
			b.Run("none", func(b *testing.B) {
				run(b, 64, func(i int64) error { return place(fmt.Sprint("u", i), nil) })
			})
			b.Run("coupon", func(b *testing.B) {
				// Each buyer's claimed coupon, made before the timer starts
				// (rows as promo.Claim writes them).
				from := keySeq.Load() + 1
				ids := make([]int64, b.N)
				now := time.Now().UTC()
				for lo := 0; lo < b.N; lo += 500 {
					hi := min(lo+500, b.N)
					bulk := make([]*ent.UserCouponCreate, 0, hi-lo)
					for j := lo; j < hi; j++ {
						bulk = append(bulk, db.Client.UserCoupon.Create().SetCouponID(c.ID).SetUserID(fmt.Sprint("u", from+int64(j))).
							SetStatus(enums.CouponAvailable).SetValidFrom(now.Add(-time.Minute)).SetValidUntil(now.Add(time.Hour)))
					}
					rows, err := db.Client.UserCoupon.CreateBulk(bulk...).Save(ctx)
					if err != nil {
						b.Fatal(err)
					}
					for k, r := range rows {
						ids[lo+k] = r.ID
					}
				}
				run(b, 64, func(i int64) error { return place(fmt.Sprint("u", i), &ids[i-from]) })
			})
			b.Run("limit", func(b *testing.B) {
				g, err := db.Client.Sku.Get(ctx, hot)
				if err != nil {
					b.Fatal(err)
				}
				if err := db.Client.Goods.UpdateOneID(g.GoodsID).SetPurchaseLimit(5).Exec(ctx); err != nil {
					b.Fatal(err)
				}
				defer db.Client.Goods.UpdateOneID(g.GoodsID).ClearPurchaseLimit().Exec(ctx)
				run(b, 64, func(i int64) error { return place(fmt.Sprint("u", i), nil) })
			})
		})
	}
}
