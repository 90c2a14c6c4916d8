package server

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"storefront/internal/platform/metrics"
)

// opMetrics counts every GraphQL response by operation and outcome and
// every error by extensions.code. It sits around responses rather than
// operations so that requests refused before execution (parse, validation,
// QUERY_TOO_COMPLEX) are counted too. It runs after the error presenter, so
// the codes it sees are the ones the client sees.
type opMetrics struct{ m *metrics.Metrics }

var _ interface {
	graphql.ResponseInterceptor
	graphql.HandlerExtension
} = opMetrics{}

func (opMetrics) ExtensionName() string                   { return "OperationMetrics" }
func (opMetrics) Validate(graphql.ExecutableSchema) error { return nil }

func (o opMetrics) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	resp := next(ctx)
	if resp == nil {
		return nil
	}
	op, executed := "unknown", false
	if graphql.HasOperationContext(ctx) {
		oc := graphql.GetOperationContext(ctx)
		if oc.Operation != nil {
			if op = rootField(oc.Operation.SelectionSet, oc.Doc.Fragments); op == "" {
				op = "unknown"
			}
		}
		// Data is set only once execution ran; a refusal before it leaves it nil.
		executed = resp.Data != nil
	}
	outcome := "ok"
	switch {
	case clientGone(ctx):
		// Counted apart, and its errors are not the service's (disconnect.go).
		outcome = "canceled"
		o.m.Requests.WithLabelValues(op, outcome).Inc()
		return resp
	case !executed:
		outcome = "rejected"
	case len(resp.Errors) > 0:
		outcome = "error"
	}
	o.m.Requests.WithLabelValues(op, outcome).Inc()
	o.m.Latency.WithLabelValues(op, outcome).Observe(time.Since(graphql.GetStartTime(ctx)).Seconds())
	for _, e := range resp.Errors {
		code, _ := e.Extensions["code"].(string)
		if code == "" {
			code = "NONE"
		}
		o.m.Errors.WithLabelValues(op, code).Inc()
		if code == codeOutOfStock && op == "placeOrder" {
			o.m.OutOfStock.Inc()
		}
	}
	if outcome == "ok" {
		switch op {
		case "placeOrder":
			o.m.OrdersPlaced.Inc()
		case "cancelOrder":
			o.m.OrdersClosed.WithLabelValues("cancel").Inc()
		}
	}
	return resp
}

// rootField names an operation by its first root field: a label bounded by
// the schema, whatever operation names clients choose.
func rootField(set ast.SelectionSet, frags ast.FragmentDefinitionList) string {
	for _, sel := range set {
		switch s := sel.(type) {
		case *ast.Field:
			return s.Name
		case *ast.InlineFragment:
			if n := rootField(s.SelectionSet, frags); n != "" {
				return n
			}
		case *ast.FragmentSpread:
			if f := frags.ForName(s.Name); f != nil {
				if n := rootField(f.SelectionSet, frags); n != "" {
					return n
				}
			}
		}
	}
	return ""
}
