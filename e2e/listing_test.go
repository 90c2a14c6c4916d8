package e2e

import (
	"slices"
	"strings"
	"testing"

	"storefront/internal/testsupport/testdb"
)

const listingQuery = `query($filter: GoodsFilter, $sort: GoodsSort, $after: String, $first: Int) {
  goodsList(first: $first, after: $after, filter: $filter, sort: $sort) {
    totalCount
    edges { cursor node { id slug priceRange { min } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}`

type listingPage struct {
	TotalCount int
	Edges      []struct {
		Cursor string
		Node   struct {
			ID, Slug   string
			PriceRange struct{ Min string }
		}
	}
	PageInfo struct {
		HasNextPage, HasPreviousPage bool
		StartCursor, EndCursor       *string
	}
}

func (p listingPage) ids() []string {
	var out []string
	for _, e := range p.Edges {
		out = append(out, e.Node.ID)
	}
	return out
}

// The listing over real HTTP against the real binary (response cache on),
// on SQLite and MariaDB: a category with its children, sorted by price; a
// price edit through this instance reorders the next anonymous answer at
// once; cursors of another sort are refused; customers see on-shelf goods
// whatever they ask; goods(slug:) and its argument rule; search bounds.
func TestListingOverHTTP(t *testing.T) {
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			cat := must[struct{ ID string }](t, s.Query(t, "", `{ category(slug: "accessories") { id } }`, nil), "category")
			byPrice := map[string]any{"filter": map[string]any{"categoryId": cat.ID}, "sort": map[string]any{"field": "PRICE", "direction": "ASC"}}
			p := must[listingPage](t, s.Query(t, "", listingQuery, byPrice), "goodsList")
			if p.TotalCount != 2 || len(p.Edges) != 2 || p.Edges[0].Node.Slug != "demo-bag" || p.Edges[1].Node.Slug != "demo-scarf" {
				t.Fatalf("配饰 by price: %+v, want the bag (39.00) then the scarf (899.00), totalCount 2", p)
			}
			if p.PageInfo.HasPreviousPage || p.PageInfo.StartCursor == nil || *p.PageInfo.StartCursor != p.Edges[0].Cursor {
				t.Errorf("first page pageInfo %+v", p.PageInfo)
			}
			bag := p.Edges[0].Node.ID

			scarf := p.Edges[1].Node.ID
			price := func(goods, to string) {
				t.Helper()
				g := must[struct {
					Skus []struct {
						ID      string
						Version int
					}
				}](t, s.Query(t, s.AdminToken, `query($id: ID!) { goods(id: $id) { skus { id version } } }`, map[string]any{"id": goods}), "goods")
				_ = must[struct{ ID string }](t, s.Query(t, s.AdminToken, `mutation($in: UpdateSkuInput!) { updateSku(input: $in) { id } }`,
					map[string]any{"in": map[string]any{"itemId": g.Skus[0].ID, "expectedVersion": g.Skus[0].Version, "sellPrice": to}}), "updateSku")
			}

			// A goods edited into a price filter joins the next anonymous
			// answer, though nothing on the cached page changed.
			cheap := map[string]any{"filter": map[string]any{"categoryId": cat.ID, "priceMax": "100.00"}, "sort": byPrice["sort"]}
			for range 2 { // the second answer may come from the response cache
				if got := must[listingPage](t, s.Query(t, "", listingQuery, cheap), "goodsList").ids(); !slices.Equal(got, []string{bag}) {
					t.Fatalf("配饰 at most 100.00: %v, want the bag [%s]", got, bag)
				}
			}
			price(scarf, "50.00")
			if got := must[listingPage](t, s.Query(t, "", listingQuery, cheap), "goodsList").ids(); !slices.Equal(got, []string{bag, scarf}) {
				t.Errorf("after one scarf SKU went to 50.00, 配饰 at most 100.00: %v, want [%s %s] (a stale cached listing?)", got, bag, scarf)
			}
			price(scarf, "899.00")

			// Asked twice: the second answer may come from the response cache.
			_ = must[listingPage](t, s.Query(t, "", listingQuery, byPrice), "goodsList")
			price(bag, "999.00")
			p = must[listingPage](t, s.Query(t, "", listingQuery, byPrice), "goodsList")
			if got := p.ids(); len(got) != 2 || got[1] != bag || p.Edges[1].Node.PriceRange.Min != "999.00" {
				t.Errorf("after the bag went to 999.00: %+v, want it last at 999.00 (a stale cached listing?)", p)
			}

			// Paging: one at a time, then a cursor of another sort.
			one := map[string]any{"first": 1, "filter": byPrice["filter"], "sort": byPrice["sort"]}
			p1 := must[listingPage](t, s.Query(t, "", listingQuery, one), "goodsList")
			one["after"] = *p1.PageInfo.EndCursor
			p2 := must[listingPage](t, s.Query(t, "", listingQuery, one), "goodsList")
			if !p1.PageInfo.HasNextPage || p2.PageInfo.HasNextPage || !p2.PageInfo.HasPreviousPage || p2.ids()[0] != bag {
				t.Errorf("paging by one: %+v then %+v", p1, p2)
			}
			wantCode(t, "a PRICE cursor with the ID sort", s.Query(t, "", listingQuery,
				map[string]any{"after": *p1.PageInfo.EndCursor, "filter": byPrice["filter"]}), "INVALID_INPUT")
			wantCode(t, "a cursor with another filter", s.Query(t, "", listingQuery,
				map[string]any{"after": *p1.PageInfo.EndCursor, "sort": byPrice["sort"]}), "INVALID_INPUT")

			// Off shelf: gone for customers whatever they ask, there for admins.
			_ = must[struct{ ID string }](t, s.Query(t, s.AdminToken, `mutation($id: ID!) { setGoodsStatus(goodsId: $id, status: OFF_SHELF) { id } }`,
				map[string]any{"id": bag}), "setGoodsStatus")
			off := map[string]any{"filter": map[string]any{"status": "OFF_SHELF"}}
			if p := must[listingPage](t, s.Query(t, "", listingQuery, off), "goodsList"); slices.Contains(p.ids(), bag) || p.TotalCount != len(p.Edges) {
				t.Errorf("a customer asking for OFF_SHELF got %v (total %d)", p.ids(), p.TotalCount)
			}
			if p := must[listingPage](t, s.Query(t, s.AdminToken, listingQuery, off), "goodsList"); !slices.Equal(p.ids(), []string{bag}) {
				t.Errorf("an admin asking for OFF_SHELF got %v, want [%s]", p.ids(), bag)
			}

			// goods(slug:), exactly one of id and slug.
			if g := must[struct{ ID string }](t, s.Query(t, "", `{ goods(slug: "demo-tshirt") { id } }`, nil), "goods"); g.ID != "1" {
				t.Errorf("goods(slug: demo-tshirt) = %q, want 1", g.ID)
			}
			wantCode(t, "goods(id, slug)", s.Query(t, "", `{ goods(id: 1, slug: "demo-tshirt") { id } }`, nil), "INVALID_INPUT")
			wantCode(t, "goods()", s.Query(t, "", `{ goods { id } }`, nil), "INVALID_INPUT")

			// Search: wildcards are literal, a term too long is refused.
			if p := must[listingPage](t, s.Query(t, "", listingQuery, map[string]any{"filter": map[string]any{"search": "%"}}), "goodsList"); p.TotalCount != 0 {
				t.Errorf("search %% matched %v: a wildcard, not a literal", p.ids())
			}
			wantCode(t, "a 61-character search", s.Query(t, "", listingQuery,
				map[string]any{"filter": map[string]any{"search": strings.Repeat("长", 61)}}), "INVALID_INPUT")
		})
	}
}
