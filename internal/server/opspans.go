package server

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"storefront/internal/platform/tracing"
	"storefront/resolvers"
)

// opSpans gives every GraphQL operation a span, a child of the request's:
// named by the operation's name (its first root field when it has none),
// with graphql.operation.type and .name and, when the answer has errors,
// the first one's extensions.code as graphql.error.code. Only the
// service's own faults (INTERNAL, UNAVAILABLE) mark it failed: an
// OUT_OF_STOCK is an answer, not an error of the service. Like opMetrics it
// sits around responses, so refusals before execution have theirs too.
// Mounted only when tracing is on.
type opSpans struct{ t *tracing.Tracing }

var _ interface {
	graphql.ResponseInterceptor
	graphql.HandlerExtension
} = opSpans{}

func (opSpans) ExtensionName() string                   { return "OperationSpans" }
func (opSpans) Validate(graphql.ExecutableSchema) error { return nil }

func (o opSpans) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	name, typ := "graphql", ""
	if graphql.HasOperationContext(ctx) {
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil {
			typ = string(oc.Operation.Operation)
			if name = oc.Operation.Name; name == "" {
				if name = rootField(oc.Operation.SelectionSet, oc.Doc.Fragments); name == "" {
					name = "graphql"
				}
			}
		}
	}
	ctx, span := o.t.Start(ctx, name, trace.WithAttributes(attribute.String("graphql.operation.type", typ),
		attribute.String("graphql.operation.name", name)))
	defer span.End()
	resp := next(ctx)
	if resp != nil && len(resp.Errors) > 0 {
		code, _ := resp.Errors[0].Extensions["code"].(string)
		span.SetAttributes(attribute.String("graphql.error.code", code), attribute.Int("graphql.errors", len(resp.Errors)))
		if code == resolvers.CodeInternal || code == codeUnavailable {
			span.SetStatus(codes.Error, code)
		}
	}
	return resp
}
