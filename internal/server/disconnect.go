package server

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"storefront/internal/vocab/errs"
	"storefront/resolvers"

	"github.com/99designs/gqlgen/graphql"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// A client that closes its connection while its request runs cancels the
// request's context: the database calls below give up with "context
// canceled" and, unclassified, every one of them would be logged as an
// internal error (eight ERROR lines when a load generator closed its
// connections). Nobody reads that answer and nothing is wrong with the
// service, so it is logged at debug level and counted apart
// (storefront_graphql_client_disconnects_total), and kept out of
// storefront_graphql_errors_total (opmetrics.go: outcome "canceled").

// clientGone says whether ctx belongs to a request whose client went away.
// The request deadline (deadline.go) ends a context with DeadlineExceeded
// and a graceful shutdown lets requests finish, so a Canceled context is a
// client that disconnected.
func clientGone(ctx context.Context) bool { return errors.Is(ctx.Err(), context.Canceled) }

// goneError is what the error presenter makes of any error of a request
// whose client went away. The transport writes no answer then, so the
// message is for logs and tests only; UNAVAILABLE is the code a client
// would have to act on ("retry"), not INTERNAL.
func goneError(ctx context.Context, err error) *gqlerror.Error {
	e := graphql.DefaultErrorPresenter(ctx, err)
	slog.DebugContext(ctx, "client closed the request", "err", err, "path", e.Path.String())
	e.Message = "the client closed the request"
	e.Extensions = map[string]any{"code": resolvers.Code(errs.Unavailable)}
	return e
}

// disconnects counts requests whose client went away before the answer
// was written.
type disconnects struct {
	n    atomic.Uint64
	desc *prometheus.Desc
}

func newDisconnects() *disconnects {
	return &disconnects{desc: prometheus.NewDesc("storefront_graphql_client_disconnects_total",
		"GraphQL requests whose client closed the connection before the answer was written (not errors of the service).", nil, nil)}
}

func (d *disconnects) count(ctx context.Context, when string) {
	d.n.Add(1)
	slog.DebugContext(ctx, "client closed the request; no answer written", "when", when)
}

func (d *disconnects) Describe(ch chan<- *prometheus.Desc) { ch <- d.desc }

func (d *disconnects) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(d.desc, prometheus.CounterValue, float64(d.n.Load()))
}
