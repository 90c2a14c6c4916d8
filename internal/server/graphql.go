package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/graph"
	"storefront/internal/platform/metrics"
	"storefront/resolvers"
)

// newGraphQL builds the GraphQL handler explicitly (not the deprecated
// NewDefaultServer): only the transports we serve (OPTIONS, and GET and
// POST as GraphQL over HTTP asks, with the response cache), a parsed-query cache and
// automatic persisted queries both bounded in bytes, the query and response
// limits, one error presenter, one recover function and the operation
// metrics.
func newGraphQL(r *resolvers.Resolver, o Options, m *metrics.Metrics, t *httpTransport) *handler.Server {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: r}))
	srv.AddTransport(transport.Options{})
	if r != nil && r.Live != nil {
		// Subscriptions over WebSocket (websocket.go).
		srv.AddTransport(newWSTransport(o.Live, o.tokens))
	}
	// GET and POST application/json, the response cache in front (transport.go).
	srv.AddTransport(t)
	srv.SetQueryCache(newByteLRU(o.QueryCacheBytes, docCost))
	if o.Tracing.On() {
		// First: its span holds every other extension's work and the resolvers'.
		srv.Use(opSpans{o.Tracing})
	}
	if o.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.SetDisableSuggestion(true)
		srv.SetValidationRulesFn(rulesWithoutSuggestions)
	}
	srv.Use(persistedSize{o.MaxPersistedQueryBytes})
	srv.Use(extension.AutomaticPersistedQuery{Cache: newByteLRU(o.QueryCacheBytes, textCost)})
	srv.Use(&queryLimits{maxDepth: o.MaxDepth, maxComplexity: o.MaxComplexity, maxAliases: o.MaxAliases})
	srv.Use(&textRule{}) // every string argument (textrule.go)
	srv.Use(&liveOps{share: newSharedAnswers()})
	srv.Use(opMetrics{m})
	srv.Use(deadline{o.RequestTimeout})
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(resolvers.WithRequestMemo(ctx))
	})
	srv.Use(responseLimit{o.MaxResponseBytes})
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(resolvers.Recover)
	return srv
}

// presentError is resolvers.PresentError, except for a query whose answer
// went over the size limit: responseLimit replaces its errors with one, so
// the others (one per field that gave up) are not even kept; and for a
// request whose client went away, which is no internal error
// (disconnect.go).
func presentError(ctx context.Context, err error) *gqlerror.Error {
	if overBudget(ctx) {
		return nil
	}
	if clientGone(ctx) {
		return goneError(ctx, err)
	}
	return resolvers.PresentError(ctx, err)
}
