package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// TestBrowserLiveStock: while the T-shirt page is open with 白色 chosen, a
// sale (here a stocktake through the API, as an order elsewhere would)
// takes 白色/S to 0: the page greys S out and lowers the total from the
// goodsStock subscription, with no click and no reload.
func TestBrowserLiveStock(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))
	g := loadGoods(t, s, "1")
	whiteS := g.sku("白色", "S")
	if whiteS.AvailableStock == 0 {
		t.Fatal("demo catalog changed: 白色/S has no stock to sell out")
	}

	b.navigate(s.URL + "/shop/goods/1")
	b.settle("the product page", func(p *pageState) bool { return len(p.Values) > 0 })
	b.waitLive()
	b.exec(`window.__sameDocument = "yes"; return null;`, nil)
	b.click(valueCSS(g.value("白色")))
	st := b.settle("白色 chosen", func(p *pageState) bool { return p.pressed("白色") })
	before := slices.Clone(st.names(func(v valueState) bool { return v.Disabled }))
	if slices.Contains(before, "S") {
		t.Fatalf("白色/S has %d units but S is greyed out: %v", whiteS.AvailableStock, before)
	}
	total := st.StockN

	r := s.Query(t, s.AdminToken, `mutation($id: ID!) { stocktake(input: {itemId: $id, countedStock: 0, reason: "sold out in the sale"}) { id stock } }`,
		map[string]any{"id": whiteS.ID})
	if len(r.Errors) > 0 {
		t.Fatalf("stocktake: %+v", r.Errors)
	}
	want := append(slices.Clone(before), "S")
	slices.Sort(want)
	st = b.settle("S greyed out by a push", func(p *pageState) bool {
		return slices.Equal(p.names(func(v valueState) bool { return v.Disabled }), want)
	})
	var same string
	b.exec(`return window.__sameDocument || "";`, &same)
	if same != "yes" {
		t.Fatal("the page was reloaded; the push should have updated it in place")
	}
	if st.StockN != fmt.Sprint(atoi(t, total)-whiteS.AvailableStock) {
		t.Errorf("total stock shown %s after 白色/S sold out, want %d - %d", st.StockN, atoi(t, total), whiteS.AvailableStock)
	}
}

// waitLive waits until the page's subscription delivered its first message.
func (b *browser) waitLive() {
	b.t.Helper()
	b.waitFor("the live stock subscription", 20*time.Second, func() (bool, error) {
		var state string
		b.exec(`const r = document.querySelector('[data-testid="product"]'); return (r && r.dataset.live) || "";`, &state)
		return state == "live", nil
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q is not a number", s)
	}
	return n
}
