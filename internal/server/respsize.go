package server

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// DefaultMaxResponseBytes is Options.MaxResponseBytes when unset: about
// fifteen times the largest product page (the 500-SKU shoe with every SKU
// field, 131 KB) and three times stockReconciliation's 10 000 rows (about
// 70 bytes each).
const DefaultMaxResponseBytes = 2 << 20

// responseLimit bounds the size of one query's answer while it is being
// built: every resolved field is charged its estimated JSON size (key and
// value: exact for strings, a few bytes for numbers and the like) against
// the operation's budget, and past it every further field gives up at once
// and the answer is a single QUERY_TOO_COMPLEX with data null. Checking
// after marshalling would come too late: the cost is building the result.
//
// Mutations are not cut short: their effects have happened, and a client
// told "too complex" with no data could repeat them. Their size is bounded
// by the complexity and alias limits, and they run one root field at a
// time.
type responseLimit struct{ max int64 }

var _ interface {
	graphql.ResponseInterceptor
	graphql.FieldInterceptor
	graphql.HandlerExtension
} = responseLimit{}

func (responseLimit) ExtensionName() string                   { return "ResponseSizeLimit" }
func (responseLimit) Validate(graphql.ExecutableSchema) error { return nil }

type budgetKey struct{}

type budget struct {
	left atomic.Int64
	over atomic.Bool
}

// errOverBudget is what fields give up with once the budget is spent; the
// error presenter drops it (and every other error of that operation), as
// the whole answer is replaced.
var errOverBudget = errors.New("response size limit reached")

func (l responseLimit) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if !graphql.HasOperationContext(ctx) {
		return next(ctx)
	}
	if op := graphql.GetOperationContext(ctx).Operation; op == nil || op.Operation != ast.Query {
		return next(ctx)
	}
	b := &budget{}
	b.left.Store(l.max)
	resp := next(context.WithValue(ctx, budgetKey{}, b))
	if resp == nil || !b.over.Load() {
		return resp
	}
	return &graphql.Response{
		Data:       json.RawMessage("null"),
		Errors:     gqlerror.List{tooComplex("the response would be larger than the limit of %d bytes; ask for fewer fields or items", l.max)},
		Extensions: resp.Extensions,
	}
}

func (l responseLimit) InterceptField(ctx context.Context, next graphql.Resolver) (any, error) {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil {
		return next(ctx)
	}
	if b.over.Load() {
		return nil, errOverBudget
	}
	res, err := next(ctx)
	if b.left.Add(-fieldBytes(graphql.GetFieldContext(ctx).Field.Alias, res)) < 0 {
		b.over.Store(true)
		return nil, errOverBudget
	}
	return res, err
}

// overBudget says whether ctx belongs to a query whose answer was given up.
func overBudget(ctx context.Context) bool {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	return b != nil && b.over.Load()
}

// fieldBytes estimates a field's share of the JSON answer: `"key":value,`.
// Objects and lists are charged their brackets and commas here; their
// fields are charged as they resolve.
func fieldBytes(key string, v any) int64 {
	n := int64(len(key)) + 4
	switch v := v.(type) {
	case nil:
		return n + 4
	case string:
		return n + int64(len(v)) + 2
	case *string:
		if v == nil {
			return n + 4
		}
		return n + int64(len(*v)) + 2
	case bool, int, int32, int64:
		return n + 8
	case time.Time:
		return n + 32
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.String: // enums
		return n + int64(rv.Len()) + 2
	case reflect.Slice:
		return n + 2 + 8*int64(rv.Len())
	}
	return n + 8
}
