// Command barepage serves the storefront's GraphQL schema from one fixed,
// already built product view, set up like gqlceiling (POST, a query cache,
// nothing else): no cache lookup, no middleware, no http.Server timeouts.
// BenchmarkProductPage runs it in its own process to split the storefront
// binary's distance to gqlceiling into what the schema's types cost (barepage
// vs gqlceiling) and what the service around gqlgen costs (storefront vs
// barepage).
//
//	barepage ADDR DBFILE
package main

import (
	"context"
	"log"
	"net/http"
	"os"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"storefront/graph"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/store"
	"storefront/resolvers"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: barepage ADDR DBFILE")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+os.Args[2])
	if err != nil {
		log.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		log.Fatal(err)
	}
	cat := catalog.New(db, catalog.DefaultConfig())
	ids, err := demo.Seed(ctx, cat)
	if err != nil {
		log.Fatal(err)
	}
	g, err := cat.Goods(ctx, catalog.Viewer{}, ids[demo.TShirtCode])
	if err != nil || g == nil {
		log.Fatalf("demo T-shirt: %v", err)
	}
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: Root{&resolvers.Resolver{}, g}}))
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	http.Handle("/graphql", srv)
	log.Fatal(http.ListenAndServe(os.Args[1], nil))
}

// Root answers every goods query with the one fixed view.
type Root struct {
	*resolvers.Resolver
	G *catalog.Goods
}

func (r Root) Query() graph.QueryResolver { return query{r.Resolver.Query(), r.G} }

type query struct {
	graph.QueryResolver
	g *catalog.Goods
}

func (q query) Goods(context.Context, *string, *string) (*catalog.Goods, error) { return q.g, nil }
