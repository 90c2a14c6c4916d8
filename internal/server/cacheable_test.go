package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
)

// Every field of a type that has cacheable fields is classified, cacheable
// or private: a field added to Goods or Sku (in any schema file) must be
// decided on before it can reach an anonymous page; and every declared
// field exists.
func TestCacheableFieldsAreClassified(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	for typ, fields := range cacheableFields {
		def := schema.Types[typ]
		if def == nil {
			t.Errorf("cacheableFields names type %s, which the schema does not have", typ)
			continue
		}
		for name := range fields {
			if def.Fields.ForName(name) == nil {
				t.Errorf("cacheableFields names %s.%s, which the schema does not have", typ, name)
			}
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") || typ == "Query" {
				continue // Query's other root fields are private by default: orders, ledger, reconciliation
			}
			if !fields[f.Name] && !privateFields[typ][f.Name] {
				t.Errorf("%s.%s is neither in cacheableFields nor in privateFields (cacheable.go)", typ, f.Name)
			}
		}
	}
	for typ, fields := range privateFields {
		for name := range fields {
			if cacheableFields[typ][name] {
				t.Errorf("%s.%s is both cacheable and private", typ, name)
			}
		}
	}
}

func TestCacheableOp(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{`{ __typename }`, true},
		{`query($id: ID!) { goods(id: $id) { id name skus { id sellPrice stock status } priceRange { min max } selectable { specValueId selectable } } }`, true},
		{`{ goodsList(first: 5) { edges { cursor node { ...G } } pageInfo { hasNextPage endCursor } } } fragment G on Goods { id specs { values { name } } skus(includeDisabled: true) { id } }`, true},
		{`{ goods(id: 1) { ... on Goods { id __typename } } }`, true},
		{`{ goods(id: 1) { skus { costPrice } } }`, false},
		// An inline fragment is walked like any selection: a private field
		// inside one, typed or not, nested or under a directive, bypasses.
		{`{ goods(id: 1) { id ... on Goods { category { id name } } } }`, false},
		{`{ goods(id: 1) { ... { skus { ... on Sku { costPrice } } } } }`, false},
		{`{ goods(id: 1) { ... @include(if: true) { ... on Goods { skus { pools { id } } } } } }`, false},
		{`{ ... on Query { goods(id: 1) { id } myOrders { edges { cursor } } } }`, false},
		{`{ ... on Query { goods(id: 1) { ... on Goods { skus { ... on Sku { id } } } } } }`, true},
		{`{ goods(id: 1) { ...F } } fragment F on Goods { skus { id costPrice } }`, false},
		{`{ goods(id: 1) { id } myOrders { edges { node { orderSn } } } }`, false},
		{`{ stockReconciliation { itemId } }`, false},
		// Carts are per shopper and change with every line: never cached,
		// even when all they select is product data.
		{`{ cart(id: "00000000000000000000000000000000") { id lines { quantity sku { id sellPrice } goods { id name } } } }`, false},
		{`query($c: ID!) { goods(id: 1) { id } cart(id: $c) { cost { subtotal } } }`, false},
		{`{ __schema { types { name } } }`, false},
		{`{ __type(name: "Goods") { name } }`, false},
		{`mutation { setGoodsStatus(goodsId: 1, status: ON_SHELF) { id } }`, false},
	} {
		doc, errs := gqlparser.LoadQuery(schema, tc.query)
		if errs != nil {
			t.Fatalf("%s: %v", tc.query, errs)
		}
		if got := cacheableOp(doc.Operations[0], doc.Fragments); got != tc.want {
			t.Errorf("cacheableOp(%s) = %v, want %v", tc.query, got, tc.want)
		}
	}
	if cacheableOp(&ast.OperationDefinition{Operation: ast.Subscription}, nil) {
		t.Error("a subscription is cacheable")
	}
}

func TestCacheKey(t *testing.T) {
	q := `{ goods(id: 1) { id } }`
	hash := func(s string) string { return sha256Hex(s) }
	pq := func(h string, v any) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": v, "sha256Hash": h}}
	}
	plain := cacheKey(&request{query: q}, nil)
	for _, tc := range []struct {
		name string
		req  request
		vars map[string]any
		want string // "same", "other" or ""
	}{
		{"hash only", request{extensions: pq(hash(q), jsonNumber("1"))}, nil, "same"},
		{"hash and query", request{query: q, extensions: pq(hash(q), jsonNumber("1"))}, nil, "same"},
		{"hash of another query", request{query: q, extensions: pq(hash(q+" "), jsonNumber("1"))}, nil, ""},
		{"upper-case hash", request{extensions: pq(strings.ToUpper(hash(q)), jsonNumber("1"))}, nil, ""},
		{"APQ version 2", request{extensions: pq(hash(q), jsonNumber("2"))}, nil, ""},
		{"bad extension", request{query: q, extensions: map[string]any{"persistedQuery": "x"}}, nil, ""},
		{"variables", request{query: q}, map[string]any{"a": jsonNumber("1")}, "other"},
		// Raw variables the operation does not declare are not in vars.
		{"undeclared variables", request{query: q, variables: []byte(`{"x":"` + strings.Repeat("y", 2048) + `"}`)}, nil, "same"},
		{"operation name", request{query: q, opName: "A"}, nil, "other"},
	} {
		got := cacheKey(&tc.req, tc.vars)
		switch {
		case tc.want == "same" && got != plain, tc.want == "" && got != "", tc.want == "other" && (got == "" || got == plain):
			t.Errorf("%s: key %q (plain %q), want %s", tc.name, got, plain, tc.want)
		}
	}
	// One set of values, one key, in whatever order the client wrote them.
	ab := map[string]any{"a": jsonNumber("1"), "b": []any{"x", map[string]any{"d": true, "c": nil}}}
	ba := map[string]any{"b": []any{"x", map[string]any{"c": nil, "d": true}}, "a": jsonNumber("1")}
	if cacheKey(&request{query: q}, ab) != cacheKey(&request{query: q}, ba) {
		t.Error("the same variables in another order give different keys")
	}
	// The name is length-prefixed: no name and variables forge another pair.
	a := cacheKey(&request{query: q, opName: "A"}, map[string]any{"x": jsonNumber("1")})
	b := cacheKey(&request{query: q, opName: `A{"x":1}`}, nil)
	if a == b {
		t.Error(`operation "A" with {} and operation "A{}" share a key`)
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func jsonNumber(s string) json.Number { return json.Number(s) }
