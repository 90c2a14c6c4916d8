package server

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
)

// Every list field of the schema has a bound in lists: a list added
// without one would be charged as a single item.
func TestEveryListFieldIsBounded(t *testing.T) {
	schema := graph.NewExecutableSchema(graph.Config{}).Schema()
	seen := 0
	for name, def := range schema.Types {
		if strings.HasPrefix(name, "__") || def.Kind == ast.InputObject {
			continue
		}
		for _, f := range def.Fields {
			if f.Type.Elem == nil || strings.HasPrefix(f.Name, "__") {
				continue
			}
			seen++
			if _, ok := lists[name+"."+f.Name]; !ok {
				t.Errorf("%s.%s is a list without a bound in lists (listbounds.go)", name, f.Name)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no list fields found in the schema")
	}
}
