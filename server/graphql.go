package server

import (
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
	"storefront/metrics"
	"storefront/resolvers"
)

// newGraphQL builds the GraphQL handler explicitly (not the deprecated
// NewDefaultServer): only the transports we serve, a parsed-query cache,
// automatic persisted queries, depth and complexity limits, one error
// presenter, one recover function and the operation metrics.
func newGraphQL(r *resolvers.Resolver, o Options, m *metrics.Metrics) *handler.Server {
	cfg := graph.Config{Resolvers: r}
	connectionCosts(&cfg.Complexity)
	srv := handler.New(graph.NewExecutableSchema(cfg))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.Use(&queryLimits{maxDepth: o.MaxDepth, maxComplexity: o.MaxComplexity})
	srv.Use(opMetrics{m})
	srv.Use(deadline{o.RequestTimeout})
	srv.SetErrorPresenter(resolvers.PresentError)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}
