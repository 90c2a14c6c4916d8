package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"storefront/internal/testsupport/testdb"
)

// The listing page in headless chromium against the real binary with the
// demo catalog: the category menu, the search box and the sort, each page
// compared with the same goodsList asked of the API; then a product page's
// description and its pictures, served by the binary.
func TestBrowserListing(t *testing.T) {
	b := startBrowser(t)
	s := Start(t, testdb.Spec(t, testdb.SQLite))

	b.navigate(s.URL + "/shop/")
	st := b.settleListing("the listing", func(p *listingState) bool { return len(p.Menu) > 0 && len(p.Cards) > 0 })
	if want := apiListing(t, s, nil, nil); !slices.Equal(st.Cards, want.ids) || st.Total != want.total {
		t.Errorf("all goods: page shows %v (total %q), API %v (total %q)", st.Cards, st.Total, want.ids, want.total)
	}
	if !slices.Contains(st.Menu, "配饰") || !slices.Contains(st.Menu, "围巾") {
		t.Errorf("category menu %v lacks the demo's 配饰 and its child 围巾", st.Menu)
	}

	// Search: a Chinese substring of one name.
	b.sendKeys(`[data-testid="search"]`, "纯棉")
	b.click(`form[role="search"] button[type="submit"]`)
	st = b.settleListing("the search for 纯棉", func(p *listingState) bool { return strings.Contains(p.URL, "q=") })
	want := apiListing(t, s, map[string]any{"search": "纯棉"}, nil)
	if !slices.Equal(st.Cards, want.ids) || len(st.Cards) != 1 || st.Cards[0] != "1" {
		t.Errorf("search 纯棉: page shows %v, API %v, want the T-shirt (1) alone", st.Cards, want.ids)
	}

	// A root category lists what is under its children too.
	b.navigate(s.URL + "/shop/")
	b.settleListing("the listing again", func(p *listingState) bool { return len(p.Menu) > 0 })
	b.click(`[data-testid="categories"] a[data-category-id]:not([data-category-id=""])` + `[data-name="配饰"]`)
	st = b.settleListing("category 配饰", func(p *listingState) bool { return strings.Contains(p.URL, "category=") && p.Title == "配饰" })
	catID := st.URL[strings.Index(st.URL, "category=")+len("category="):]
	want = apiListing(t, s, map[string]any{"categoryId": catID}, nil)
	if !slices.Equal(st.Cards, want.ids) || len(st.Cards) != 2 {
		t.Errorf("配饰: page shows %v, API %v, want the bag and the scarf (its children 包袋 and 围巾)", st.Cards, want.ids)
	}

	// Sorted by price, highest first, inside the category.
	b.exec(`const s = document.querySelector('[data-testid="sort"]'); s.value = "PRICE_DESC"; s.dispatchEvent(new Event("change"));`, nil)
	st = b.settleListing("price, high to low", func(p *listingState) bool { return strings.Contains(p.URL, "sort=PRICE_DESC") })
	want = apiListing(t, s, map[string]any{"categoryId": catID}, map[string]any{"field": "PRICE", "direction": "DESC"})
	if !slices.Equal(st.Cards, want.ids) || len(want.ids) != 2 || want.ids[0] == apiListing(t, s, map[string]any{"categoryId": catID}, nil).ids[0] {
		t.Errorf("配饰 by price desc: page shows %v, API %v (the scarf at 899.00 before the bag at 39.00)", st.Cards, want.ids)
	}

	// The product page, from its card: its description and its pictures, loaded.
	b.navigate(s.URL + "/shop/")
	b.settleListing("the listing once more", func(p *listingState) bool { return slices.Contains(p.Cards, "1") })
	b.click(`.card[data-goods-id="1"] a`)
	var content struct {
		Description string
		Images      int
		Loaded      int
	}
	b.waitFor("the T-shirt's description and pictures", 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(`const d = document.querySelector('[data-testid="description"]');
			const imgs = Array.from(document.querySelectorAll('[data-testid="image"]'));
			return {description: d ? d.textContent : "", images: imgs.length, loaded: imgs.filter((i) => i.complete && i.naturalWidth > 0).length};`, &raw)
		err := json.Unmarshal(raw, &content)
		return err == nil && content.Images > 0 && content.Loaded == content.Images, err
	})
	if !strings.Contains(content.Description, "纯棉") || content.Images != 2 {
		t.Errorf("T-shirt page: description %q, %d pictures; want the demo's description and 2 pictures", content.Description, content.Images)
	}
}

type listingState struct {
	Busy  string
	URL   string
	Title string
	Total string
	Cards []string
	Menu  []string
}

const readListing = `
const root = document.querySelector('[data-testid="listing"]');
if (!root) return null;
return {
  busy: document.getElementById("app").getAttribute("aria-busy"), url: location.href,
  title: document.querySelector('[data-testid="listing-title"]').textContent,
  total: document.querySelector('[data-testid="total"]').dataset.total || "",
  cards: Array.from(document.querySelectorAll('[data-testid="goods-list"] .card'), (c) => c.dataset.goodsId),
  menu: Array.from(document.querySelectorAll('[data-testid="categories"] a[data-category-id]'), (a) => { a.dataset.name = a.textContent; return a.textContent; }),
};`

func (b *browser) settleListing(what string, cond func(*listingState) bool) *listingState {
	b.t.Helper()
	var st *listingState
	b.waitFor(what, 20*time.Second, func() (bool, error) {
		var raw json.RawMessage
		b.exec(readListing, &raw)
		st = nil
		if err := json.Unmarshal(raw, &st); err != nil || st == nil {
			return false, err
		}
		return st.Busy == "false" && cond(st), nil
	})
	return st
}

// sendKeys types text into the element, as WebDriver's element send keys.
func (b *browser) sendKeys(css, text string) {
	b.t.Helper()
	b.cmd("POST", "/element/"+b.find(css)+"/value", map[string]any{"text": text}, nil)
}

type listed struct {
	ids   []string
	total string
}

// apiListing is the first page (24, the page's size) the API gives anonymous callers.
func apiListing(t *testing.T, s *Server, filter, sort map[string]any) listed {
	t.Helper()
	r := s.Query(t, "", `query($filter: GoodsFilter, $sort: GoodsSort) { goodsList(first: 24, filter: $filter, sort: $sort) {
		totalCount edges { node { id } } } }`, map[string]any{"filter": filter, "sort": sort})
	var out struct {
		GoodsList struct {
			TotalCount json.Number
			Edges      []struct{ Node struct{ ID string } }
		}
	}
	if len(r.Errors) > 0 || json.Unmarshal(r.Data, &out) != nil {
		t.Fatalf("goodsList %v %v: %s %+v", filter, sort, r.Data, r.Errors)
	}
	l := listed{total: out.GoodsList.TotalCount.String()}
	for _, e := range out.GoodsList.Edges {
		l.ids = append(l.ids, e.Node.ID)
	}
	return l
}
