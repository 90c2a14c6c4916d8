package server

import (
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
	"storefront/resolvers"
)

// newGraphQL builds the GraphQL handler explicitly (not the deprecated
// NewDefaultServer): only the transports we serve, a parsed-query cache,
// automatic persisted queries, one error presenter and one recover function.
func newGraphQL(r *resolvers.Resolver, introspection bool) *handler.Server {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: r}))
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if introspection {
		srv.Use(extension.Introspection{})
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: lru.New[string](1000)})
	srv.SetErrorPresenter(resolvers.PresentError)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}
