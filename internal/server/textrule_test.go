package server

import (
	"context"
	"testing"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"

	"storefront/graph"
)

// The product page's query (bench/productpage_bench_test.go's pageQuery).
const pageQuery = `query($id: ID!, $sel: [ID!]) { goods(id: $id) { id name specs { id name values { id name } } skus { id specValueIds sellPrice stock status } priceRange { min max } totalStock selectable(selected: $sel) { specValueId selectable } } }`

// BenchmarkTextRule is what the input rule adds to each product page: the
// walk of its arguments and the UTF-8 check of its body. Compare with
// bench's BenchmarkHandler/page12 (docs/benchmarks.md, issue 38).
func BenchmarkTextRule(b *testing.B) {
	es := graph.NewExecutableSchema(graph.Config{})
	doc, errs := gqlparser.LoadQuery(es.Schema(), pageQuery)
	if errs != nil {
		b.Fatal(errs)
	}
	x := &textRule{}
	if err := x.Validate(es); err != nil {
		b.Fatal(err)
	}
	op := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0],
		Variables: map[string]any{"id": "1", "sel": []any{"11"}}}
	body := []byte(`{"query":"` + pageQuery + `","variables":{"id":"1","sel":["11"]}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !utf8.Valid(body) {
			b.Fatal("body")
		}
		if err := x.MutateOperationContext(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
}
