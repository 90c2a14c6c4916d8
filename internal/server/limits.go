package server

import (
	"context"

	"storefront/resolvers"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Defaults of the query limits (Options.MaxDepth, MaxComplexity,
// MaxAliases). The deepest query the schema allows is 6 (goodsList → edges
// → node → specs → values → name). A complexity is about the number of
// fields the answer may hold, lists counted at their real bounds
// (listbounds.go): the shop's product page of the 500-SKU shoe costs 7 043,
// every field of its every SKU 15 527 and stockReconciliation(limit: 10000)
// with all five columns 50 001 (TestRealQueriesWithinDefaultLimits logs
// the first two). Aliases
// are how one small request asks for the same expensive field many times;
// the product pages use at most two.
const (
	DefaultMaxDepth      = 10
	DefaultMaxComplexity = 100_000
	DefaultMaxAliases    = 20
)

// queryLimits refuses a query that uses too many aliases, nests too deep or
// costs too much before any resolver runs, with the stable code
// QUERY_TOO_COMPLEX (gqlgen's own FixedComplexityLimit answers with a code
// of its own and has no depth limit).
type queryLimits struct {
	maxDepth, maxComplexity, maxAliases int
}

var _ interface {
	graphql.OperationContextMutator
	graphql.HandlerExtension
} = &queryLimits{}

func (*queryLimits) ExtensionName() string                   { return "QueryLimits" }
func (*queryLimits) Validate(graphql.ExecutableSchema) error { return nil }

func (q *queryLimits) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil // gqlgen reports the missing operation itself
	}
	s := analyze(op.Operation, op.Doc, op.Variables)
	switch {
	case s.aliases > q.maxAliases:
		return tooComplex("query uses %d aliases, over the limit of %d", s.aliases, q.maxAliases)
	case s.depth > q.maxDepth:
		return tooComplex("query depth %d exceeds the limit of %d", s.depth, q.maxDepth)
	case s.cost > q.maxComplexity:
		return tooComplex("query complexity %d exceeds the limit of %d", s.cost, q.maxComplexity)
	}
	return nil
}

func tooComplex(format string, args ...any) *gqlerror.Error {
	return refusal(resolvers.ErrQueryTooComplex, format, args...)
}
