package resolvers_test

import (
	"encoding/json"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
)

// A coupon's claim window takes any instant every backend stores (issue 50:
// MariaDB's TIMESTAMP refused 2038-01-19T03:14:08Z, 9999 and 1969 with an
// INTERNAL error): each is stored, answered and read back the same on
// SQLite, MariaDB and PostgreSQL, and the coupon is claimed inside it. One
// outside 1000..9999 is INVALID_INPUT everywhere, with nothing stored.
func TestCouponTimesOnEveryBackend(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		signer, err := auth.NewSigner("coupon-times-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, app.DefaultConfig())
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		buyer, _ := signer.Issue("bob", auth.Customer, time.Hour)
		create := `mutation($in: CreateCouponInput!) { createCoupon(input: $in) { id claimStartsAt claimEndsAt } }`
		in := func(starts, ends any) map[string]any {
			return map[string]any{"in": map[string]any{"name": "满减", "kind": "AMOUNT_OFF", "amountOff": "5.00", "claimStartsAt": starts, "claimEndsAt": ends}}
		}
		type window struct {
			ID            string
			ClaimStartsAt *string
			ClaimEndsAt   *string
		}
		str := func(s string) *string { return &s }
		for _, tc := range []struct {
			name         string
			starts, ends any
			want         window
		}{
			{"past TIMESTAMP's end", nil, "2038-01-19T03:14:08Z", window{ClaimEndsAt: str("2038-01-19T03:14:08Z")}},
			{"the last second of 9999", "1969-12-31T23:59:59Z", "9999-12-31T23:59:59Z", window{ClaimStartsAt: str("1969-12-31T23:59:59Z"), ClaimEndsAt: str("9999-12-31T23:59:59Z")}},
			{"the widest range, finer than a microsecond, with an offset", "1000-01-01T08:00:00+08:00", "9999-12-31T23:59:59.9999999Z",
				window{ClaimStartsAt: str("1000-01-01T00:00:00Z"), ClaimEndsAt: str("9999-12-31T23:59:59.999999Z")}},
		} {
			a := gqltest.Do(t, h, admin, create, in(tc.starts, tc.ends))
			var got window
			if a.Code() != "" || json.Unmarshal(a.Data["createCoupon"], &got) != nil {
				t.Fatalf("createCoupon %s: %+v", tc.name, a)
			}
			tc.want.ID = got.ID
			same := func(g window) bool {
				eq := func(a, b *string) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
				return g.ID == tc.want.ID && eq(g.ClaimStartsAt, tc.want.ClaimStartsAt) && eq(g.ClaimEndsAt, tc.want.ClaimEndsAt)
			}
			if !same(got) {
				t.Errorf("createCoupon %s answered %s, want %s", tc.name, show(got), show(tc.want))
			}
			a = gqltest.Do(t, h, admin, `{ coupons(first: 1) { edges { node { id claimStartsAt claimEndsAt } } } }`, nil)
			var conn struct{ Edges []struct{ Node window } }
			if a.Code() != "" || json.Unmarshal(a.Data["coupons"], &conn) != nil || len(conn.Edges) != 1 || !same(conn.Edges[0].Node) {
				t.Errorf("coupons after the one %s: %+v, want %s", tc.name, a, show(tc.want))
			}
			a = gqltest.Do(t, h, buyer, `mutation($id: ID!) { claimCoupon(couponId: $id) { status coupon { id claimStartsAt claimEndsAt } } }`, map[string]any{"id": got.ID})
			var claimed struct {
				Status string
				Coupon window
			}
			if a.Code() != "" || json.Unmarshal(a.Data["claimCoupon"], &claimed) != nil || claimed.Status != "AVAILABLE" || !same(claimed.Coupon) {
				t.Errorf("claimCoupon of the one %s: %+v", tc.name, a)
			}
		}
		var before int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM coupon").Scan(&before); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name         string
			starts, ends any
		}{
			{"claimEndsAt in year 10000", nil, "10000-01-01T00:00:00Z"},
			{"claimEndsAt past 9999 in UTC", nil, "9999-12-31T23:59:59-01:00"},
			{"claimStartsAt before 1000", "0999-12-31T23:59:59Z", "2030-01-01T00:00:00Z"},
			{"claimStartsAt at year 1", "0001-01-01T00:00:00Z", nil},
		} {
			if a := gqltest.Do(t, h, admin, create, in(tc.starts, tc.ends)); a.Code() != "INVALID_INPUT" {
				t.Errorf("createCoupon with %s: %+v, want INVALID_INPUT", tc.name, a)
			}
		}
		var after int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM coupon").Scan(&after); err != nil || after != before {
			t.Errorf("%d coupons after the refused ones, want %d (%v)", after, before, err)
		}
	})
}

func show(w struct {
	ID            string
	ClaimStartsAt *string
	ClaimEndsAt   *string
}) string {
	s := func(p *string) string {
		if p == nil {
			return "null"
		}
		return *p
	}
	return w.ID + " " + s(w.ClaimStartsAt) + ".." + s(w.ClaimEndsAt)
}
