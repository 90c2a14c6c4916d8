package server

import (
	"context"
	"strings"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/enums"
	"storefront/graph"
)

// Defaults for Options.MaxDepth and Options.MaxComplexity. The deepest real
// query (myOrders → edges → node → lines → field) is 5; a product list of
// 100 goods with their SKUs costs about 26 000.
const (
	DefaultMaxDepth      = 10
	DefaultMaxComplexity = 50_000
)

// queryLimits refuses a query that is too deep or too expensive before any
// resolver runs, with the stable code QUERY_TOO_COMPLEX (gqlgen's own
// FixedComplexityLimit answers with a code of its own and has no depth limit).
type queryLimits struct {
	maxDepth, maxComplexity int
	es                      graphql.ExecutableSchema
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = &queryLimits{}

func (*queryLimits) ExtensionName() string { return "QueryLimits" }

func (q *queryLimits) Validate(es graphql.ExecutableSchema) error { q.es = es; return nil }

func (q *queryLimits) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil // gqlgen reports the missing operation itself
	}
	if d := depth(op.Operation.SelectionSet, op.Doc.Fragments, 0, map[string]bool{}); d > q.maxDepth {
		return tooComplex("query depth %d exceeds the limit of %d", d, q.maxDepth)
	}
	if c := complexity.Calculate(ctx, q.es, op.Operation, op.Variables); c > q.maxComplexity {
		return tooComplex("query complexity %d exceeds the limit of %d", c, q.maxComplexity)
	}
	return nil
}

func tooComplex(format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	e.Extensions = map[string]any{"code": "QUERY_TOO_COMPLEX"}
	return e
}

// depth counts nested fields; fragments count where they are spread.
// Introspection subtrees (__schema, __type) are not counted: the standard
// introspection query nests ofType nine levels deep, and whether
// introspection is allowed at all is its own setting. The seen set guards
// against fragment cycles even though validation rejects them first.
func depth(set ast.SelectionSet, frags ast.FragmentDefinitionList, level int, seen map[string]bool) int {
	deepest := level
	for _, sel := range set {
		d := level
		switch s := sel.(type) {
		case *ast.Field:
			switch {
			case strings.HasPrefix(s.Name, "__"):
				d = level + 1
			case len(s.SelectionSet) == 0:
				d = level + 1
			default:
				d = depth(s.SelectionSet, frags, level+1, seen)
			}
		case *ast.InlineFragment:
			d = depth(s.SelectionSet, frags, level, seen)
		case *ast.FragmentSpread:
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			if f := frags.ForName(s.Name); f != nil {
				d = depth(f.SelectionSet, frags, level, seen)
			}
			delete(seen, s.Name)
		}
		deepest = max(deepest, d)
	}
	return deepest
}

// connectionCosts weights lists by how many items they can return, so
// `goodsList(first: 100) { edges { node { skus … } } }` costs what it does.
func connectionCosts(c *graph.ComplexityRoot) {
	c.Query.GoodsList = func(child int, first *int64, _ *string, _ *enums.GoodsStatus) int { return 1 + page(first)*child }
	c.Query.MyOrders = func(child int, first *int64, _ *string) int { return 1 + page(first)*child }
	c.Query.StockLedger = func(child int, _ int64, first *int64, _ *string) int { return 1 + page(first)*child }
	// A goods has at most 500 SKUs; 50 is a heavy but typical page.
	c.Goods.Skus = func(child int, _ *bool) int { return 1 + 50*child }
}

// page is the number of items a connection may return: first, capped at
// 100 as the resolvers cap it; 20 when absent.
func page(first *int64) int {
	if first == nil || *first <= 0 {
		return 20
	}
	return int(min(*first, 100))
}
