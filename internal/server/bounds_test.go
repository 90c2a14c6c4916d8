package server

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// firstCode is the first error's extensions.code of an answer ("" when none).
func firstCode(t *testing.T, a answer) string {
	t.Helper()
	var r struct {
		Errors []struct{ Extensions map[string]any }
	}
	if err := json.Unmarshal(a.Body.Bytes(), &r); err != nil {
		t.Fatalf("%d %s: %v", a.Code, a.body(), err)
	}
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// An inline fragment that selects a field the cache may not serve
// (Goods.category reads the category tree, which no goods edit
// invalidates) makes the whole operation bypass the response cache:
// executed every time, never stored.
func TestResponseCacheInlineFragmentBypasses(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		q := `query($id: ID!) { goods(id: $id) { id ... on Goods { name category { id name } } } }`
		vars := map[string]any{"id": strconv.FormatInt(f.shirt, 10)}
		f.post(t, "", q, vars).data(t)
		f.rc.Wait()
		before := f.counters()
		for range 3 {
			f.post(t, "", q, vars).data(t)
		}
		after := f.counters()
		if after[0] != before[0] || after[1] != before[1] || after[3]-before[3] != 3 {
			t.Errorf("hits/misses/stale/bypasses went %v -> %v, want 3 more bypasses and nothing else", before, after)
		}
	})
}

// Variables the operation does not declare are not part of the key: a
// client sending a new 2 KB extra each time is served the one stored
// answer, and the cache holds one entry (issue 25: one entry per request).
func TestResponseCacheIgnoresUndeclaredVariables(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		id := strconv.FormatInt(f.shoe, 10)
		first := f.post(t, "", rcPage, map[string]any{"id": id, "pad": strings.Repeat("a", 2048)})
		first.data(t)
		f.rc.Wait()
		before := f.counters()
		for i := range 5 {
			pad := strings.Repeat(strconv.Itoa(i), 2048)
			a := f.post(t, "", rcPage, map[string]any{"pad": pad, "id": id})
			if a.statements != 0 || a.body() != first.body() {
				t.Fatalf("request %d with another undeclared variable: %d statements, same bytes %v", i, a.statements, a.body() == first.body())
			}
		}
		if got := f.counters(); got[0]-before[0] != 5 || got[1] != before[1] {
			t.Errorf("hits/misses went %v -> %v, want 5 more hits and no miss", before, got)
		}
		// A declared variable is still part of the key.
		if a := f.post(t, "", rcPage, map[string]any{"id": strconv.FormatInt(f.bag, 10)}); a.body() == first.body() {
			t.Error("another goods id was answered with the shoe's page")
		}
	})
}

// An id has one spelling: "03", "+3" and " 3" are INVALID_INPUT as "abc"
// is, through variables and literals, and nothing is stored for them.
func TestIDsAreCanonical(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		id := strconv.FormatInt(f.shirt, 10)
		if a := f.post(t, "", `query($id: ID!) { goods(id: $id) { id } }`, map[string]any{"id": id}); firstCode(t, a) != "" {
			t.Fatalf("canonical id %s: %s", id, a.body())
		}
		for _, bad := range []string{"0" + id, "+" + id, " " + id, id + " ", "abc"} {
			a := f.post(t, "", `query($id: ID!) { goods(id: $id) { id } }`, map[string]any{"id": bad})
			if c := firstCode(t, a); c != "INVALID_INPUT" {
				t.Errorf("goods(id: %q) via a variable: code %q, want INVALID_INPUT: %s", bad, c, a.body())
			}
			a = f.post(t, "", `{ goods(id: `+strconv.Quote(bad)+`) { id } }`, nil)
			if c := firstCode(t, a); c != "INVALID_INPUT" {
				t.Errorf("goods(id: %q) as a literal: code %q, want INVALID_INPUT: %s", bad, c, a.body())
			}
		}
	})
}

// first: 0 is no edges (the count and pageInfo still answer); an absent
// first is the default page.
func TestFirstZeroIsNoEdges(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		list := func(token, args string) (edges int, total float64) {
			d := f.post(t, token, `{ goodsList`+args+` { edges { cursor } totalCount pageInfo { hasNextPage } } }`, nil).data(t)
			c := d["goodsList"].(map[string]any)
			return len(c["edges"].([]any)), c["totalCount"].(float64)
		}
		if n, total := list("", "(first: 0)"); n != 0 || total < 3 {
			t.Errorf("goodsList(first: 0): %d edges, totalCount %v; want 0 edges and the demo's count", n, total)
		}
		if n, total := list("", ""); n != int(min(total, 20)) || n == 0 {
			t.Errorf("goodsList without first: %d edges of %v, want the default page", n, total)
		}
		if n, _ := list(f.admin, "(first: 0)"); n != 0 {
			t.Errorf("goodsList(first: 0) as admin: %d edges", n)
		}
		d := f.post(t, f.admin, `query($id: ID!) { stockLedger(itemId: $id, first: 0) { edges { cursor } pageInfo { hasNextPage } } }`,
			map[string]any{"id": f.firstSKU(t)}).data(t)
		if e := d["stockLedger"].(map[string]any)["edges"].([]any); len(e) != 0 {
			t.Errorf("stockLedger(first: 0): %d edges", len(e))
		}
	})
}

// Money is the decimal string and nothing else: " 1.00" is refused as
// "abc" is, never read as 1.00.
func TestMoneyRefusesWhiteSpace(t *testing.T) {
	eachCached(t, catalog.DefaultConfig(), func(t *testing.T, f *rcFixture) {
		q := `query($min: Money) { goodsList(filter: {priceMin: $min}) { totalCount } }`
		want := firstCode(t, f.post(t, "", q, map[string]any{"min": "abc"}))
		if want == "" {
			t.Fatal(`priceMin "abc" was accepted`)
		}
		if a := f.post(t, "", q, map[string]any{"min": "1.00"}); firstCode(t, a) != "" {
			t.Fatalf(`priceMin "1.00": %s`, a.body())
		}
		for _, bad := range []string{" 1.00", "1.00 ", "\t1"} {
			if c := firstCode(t, f.post(t, "", q, map[string]any{"min": bad})); c != want {
				t.Errorf("priceMin %q: code %q, want %q as for \"abc\"", bad, c, want)
			}
		}
	})
}

// firstSKU is the id of the T-shirt's first SKU.
func (f *rcFixture) firstSKU(t *testing.T) string {
	t.Helper()
	d := f.post(t, f.admin, `query($id: ID!) { goods(id: $id) { skus { id } } }`, map[string]any{"id": strconv.FormatInt(f.shirt, 10)}).data(t)
	return d["goods"].(map[string]any)["skus"].([]any)[0].(map[string]any)["id"].(string)
}

// myOrders(first: 0) is no edges too, and an absent first the default page.
func TestMyOrdersFirstZero(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := newRLServer(t, db, RateLimits{})
		place := `mutation($sku: ID!) { placeOrder(input: {items: [{itemId: $sku, quantity: 1}]}) { orderSn } }`
		for i := range 2 {
			if a := s.send(t, s.customer, place, map[string]any{"sku": s.sku}, "Idempotency-Key", fmt.Sprintf("first-zero-%d", i)); a.status != 200 || a.code != "" {
				t.Fatalf("placeOrder: %d %s", a.status, a.body)
			}
		}
		for _, tc := range []struct {
			args string
			want int
		}{{"(first: 0)", 0}, {"", 2}, {"(first: 1)", 1}} {
			a := s.send(t, s.customer, `{ myOrders`+tc.args+` { edges { cursor } } }`, nil)
			var r struct {
				Data struct {
					MyOrders struct{ Edges []any }
				}
			}
			if err := json.Unmarshal([]byte(a.body), &r); err != nil || a.code != "" || len(r.Data.MyOrders.Edges) != tc.want {
				t.Errorf("myOrders%s: %d edges (%s), want %d", tc.args, len(r.Data.MyOrders.Edges), a.body, tc.want)
			}
		}
	})
}
