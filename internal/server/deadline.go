package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// deadline bounds the execution of one GraphQL operation: every database
// call below it gives up at the deadline and the error presenter answers
// UNAVAILABLE. It wraps execution rather than the HTTP request because
// gqlgen drops the whole response (the client would read `null`) when the
// request's own context has ended by the time the response is produced.
type deadline struct{ d time.Duration }

var _ interface {
	graphql.ResponseInterceptor
	graphql.HandlerExtension
} = deadline{}

func (deadline) ExtensionName() string                   { return "RequestDeadline" }
func (deadline) Validate(graphql.ExecutableSchema) error { return nil }

func (t deadline) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if isSubscription(ctx) {
		// Each call waits for a subscription's next message, which may be
		// minutes away; the hub bounds its own reads (package live).
		return next(ctx)
	}
	ctx, cancel := context.WithTimeout(ctx, t.d)
	defer cancel()
	return next(ctx)
}
