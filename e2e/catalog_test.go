package e2e

import (
	"encoding/json"
	"reflect"
	"testing"

	"storefront/internal/testsupport/testdb"
)

const productPage = `query($id: ID!, $a: [ID!]!, $b: [ID!]!, $sel: [ID!]) {
  goods(id: $id) {
    id name status specType version
    specs { id name values { id name } }
    skus { id goodsId specValueIds specValueStr specKey skuCode sellPrice lineationPrice costPrice stock version volume status }
    priceRange { min max }
    totalStock
    a: skuBySelection(specValueIds: $a) { id specValueStr stock }
    b: skuBySelection(specValueIds: $b) { id }
    selectable(selected: $sel) { specValueId selectable }
  }
}`

type page struct {
	Goods struct {
		ID    string
		Name  string
		Specs []struct {
			ID     string
			Name   string
			Values []struct{ ID, Name string }
		}
		Skus []struct {
			ID           string
			SpecValueStr string
			SellPrice    string
			CostPrice    *string
			Stock        int
		}
		PriceRange struct{ Min, Max string }
		TotalStock int
		A          struct {
			ID           string
			SpecValueStr string
			Stock        int
		}
		B          struct{ ID string }
		Selectable []struct {
			SpecValueID string
			Selectable  bool
		}
	}
}

// The "done when": the product page of the demo T-shirt over real
// HTTP against the real binary, on SQLite and on MariaDB, gives the same answers.
func TestProductPageOverHTTP(t *testing.T) {
	var answers []page
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			s := Start(t, testdb.Spec(t, b))
			p := fetchPage(t, s)
			if len(p.Goods.Skus) != 12 {
				t.Fatalf("SKUs = %d, want 12", len(p.Goods.Skus))
			}
			if p.Goods.PriceRange.Min != "89.00" || p.Goods.PriceRange.Max != "129.00" {
				t.Errorf("priceRange = %+v", p.Goods.PriceRange)
			}
			if p.Goods.A.ID == "" || p.Goods.A.ID != p.Goods.B.ID || p.Goods.A.SpecValueStr != "黑色,L" || p.Goods.A.Stock != 200 {
				t.Errorf("[黑色,L] -> %+v, [L,黑色] -> %+v", p.Goods.A, p.Goods.B)
			}
			for _, s := range p.Goods.Skus {
				if s.CostPrice != nil {
					t.Errorf("anonymous caller sees costPrice of SKU %s", s.ID)
				}
			}
			answers = append(answers, p)

			// Error codes come through the real server too.
			r := s.Query(t, "", `{ goods(id: "1") { skuBySelection(specValueIds: ["1","2"]) { id } } }`, nil)
			if r.Code() != "INVALID_SELECTION" {
				t.Errorf("two colours: code %q, errors %+v", r.Code(), r.Errors)
			}
			if r := s.Query(t, "", `{ goods(id: "424242") { id } }`, nil); string(r.Data) != `{"goods":null}` || len(r.Errors) > 0 {
				t.Errorf("unknown goods: data %s errors %+v", r.Data, r.Errors)
			}
			if r := s.Query(t, "", `{ goods(id: "1") { nope } }`, nil); r.Code() != "GRAPHQL_VALIDATION_FAILED" {
				t.Errorf("unknown field: code %q", r.Code())
			}
			list := s.Query(t, "", `{ goodsList(first: 2) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`, nil)
			var l struct {
				GoodsList struct {
					Edges    []struct{ Cursor string }
					PageInfo struct{ HasNextPage bool }
				}
			}
			_ = json.Unmarshal(list.Data, &l)
			if len(l.GoodsList.Edges) != 2 || !l.GoodsList.PageInfo.HasNextPage {
				t.Errorf("goodsList(first: 2) = %s %+v", list.Data, list.Errors)
			}
		})
	}
	if len(answers) == 2 && !reflect.DeepEqual(answers[0], answers[1]) {
		t.Errorf("SQLite and MariaDB answer differently:\n%+v\n%+v", answers[0], answers[1])
	}
}

func fetchPage(t *testing.T, s *Server) page {
	t.Helper()
	// Ids come from the page itself, so the test holds whatever ids the database assigns.
	r := s.Query(t, "", `{ goods(id: "1") { specs { values { id name } } } }`, nil)
	var pre struct {
		Goods struct {
			Specs []struct{ Values []struct{ ID, Name string } }
		}
	}
	if err := json.Unmarshal(r.Data, &pre); err != nil || len(pre.Goods.Specs) != 2 {
		t.Fatalf("specs of goods 1: %s %+v", r.Data, r.Errors)
	}
	id := map[string]string{}
	for _, s := range pre.Goods.Specs {
		for _, v := range s.Values {
			id[v.Name] = v.ID
		}
	}
	r = s.Query(t, "", productPage, map[string]any{
		"id": "1", "a": []string{id["黑色"], id["L"]}, "b": []string{id["L"], id["黑色"]}, "sel": []string{id["黑色"]},
	})
	if len(r.Errors) > 0 {
		t.Fatalf("product page errors: %+v", r.Errors)
	}
	var p page
	if err := json.Unmarshal(r.Data, &p); err != nil {
		t.Fatal(err)
	}
	return p
}
