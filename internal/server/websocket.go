package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"storefront/internal/live"
	"storefront/internal/platform/auth"
	"storefront/internal/vocab/errs"
)

// Defaults of LiveOptions. Offices and carrier NAT put many browsers behind
// one address, so the per-address bound is far above one page's needs (a
// product page holds one connection with one subscription) and only stops a
// single client from exhausting the instance's file descriptors.
const (
	DefaultMaxLiveConnsPerAddr     = 4096
	DefaultMaxSubscriptionsPerConn = 100
	DefaultLivePingInterval        = 25 * time.Second
	DefaultLiveInitTimeout         = 10 * time.Second
	// DefaultMaxLiveConns is LiveOptions.MaxConns when unset: what
	// MaxLiveConnsFor gives the memory limit of a server with default caches
	// (208 MiB).
	DefaultMaxLiveConns = 1331
	// LiveConnBytes is what one idle graphql-transport-ws connection costs
	// the process, measured: 9,000 of them took RSS from 44 to 404 MiB, 41 KiB
	// each (goroutine stacks, the hijacked connection's buffers, gqlgen's and
	// coder/websocket's state; docs/benchmarks.md).
	LiveConnBytes = 40 << 10
)

// MaxLiveConnsFor is the default bound on an instance's WebSocket
// connections for a soft memory limit of limit bytes: a quarter of the limit
// at LiveConnBytes each. Idle connections are not garbage the collector can
// reclaim, so without a bound a flood of them grows the process past any
// limit (9,000 took a server with a 208 MiB limit to 404 MiB); a quarter
// leaves the rest to the caches the limit is derived from and to requests.
func MaxLiveConnsFor(limit int64) int {
	return int(max(limit/4/LiveConnBytes, 64))
}

// LiveOptions configures subscriptions over WebSocket on /graphql
// (graphql-transport-ws, the npm graphql-ws client's protocol; docs/live.md).
type LiveOptions struct {
	// MaxConnsPerAddr bounds the open WebSocket connections of one client
	// address; one more is refused with 429 before the upgrade.
	MaxConnsPerAddr int
	// MaxConns bounds the open WebSocket connections of the instance; one
	// more is refused with 503 and Retry-After before the upgrade, so that
	// the connections of many addresses stay within the memory they are
	// given (MaxLiveConnsFor).
	MaxConns int
	// MaxSubscriptionsPerConn bounds the subscriptions running at once on
	// one connection; one more ends at once with RATE_LIMITED.
	MaxSubscriptionsPerConn int
	// OriginPatterns are the other origins whose pages may connect (host
	// patterns as coder/websocket matches them, e.g. "shop.example.com",
	// "*.example.com"). A browser page of this very host is always allowed,
	// as for the page's own POSTs; clients that send no Origin (not
	// browsers) too.
	OriginPatterns []string
	// PingInterval is how often the server pings; a client that has not
	// answered within two intervals is disconnected.
	PingInterval time.Duration
	// InitTimeout is how long a client may take to send connection_init.
	InitTimeout time.Duration
	// Closing, when done, closes every WebSocket connection: http.Server's
	// Shutdown does not track hijacked connections.
	Closing context.Context

	conns *liveConns // set by build, which exports it on /metrics
}

func (o LiveOptions) withDefaults() LiveOptions {
	o.MaxConnsPerAddr = positive(o.MaxConnsPerAddr, DefaultMaxLiveConnsPerAddr)
	o.MaxConns = positive(o.MaxConns, DefaultMaxLiveConns)
	o.MaxSubscriptionsPerConn = positive(o.MaxSubscriptionsPerConn, DefaultMaxSubscriptionsPerConn)
	o.PingInterval = positive(o.PingInterval, DefaultLivePingInterval)
	o.InitTimeout = positive(o.InitTimeout, DefaultLiveInitTimeout)
	if o.Closing == nil {
		o.Closing = context.Background()
	}
	if o.conns == nil {
		o.conns = &liveConns{}
	}
	return o
}

// wsTransport is gqlgen's WebSocket transport with what it lacks: bounds
// on connections per client address and per instance, origin checks, the token from
// connection_init, deadlines cleared after the upgrade and a close on
// shutdown. Subscriptions per connection are bounded by liveOps.
type wsTransport struct {
	ws    transport.Websocket
	o     LiveOptions
	addrs *addrCounts
}

var _ graphql.Transport = (*wsTransport)(nil)

func newWSTransport(o LiveOptions, tokens *auth.Tokens) *wsTransport {
	o = o.withDefaults()
	t := &wsTransport{o: o, addrs: &addrCounts{n: map[string]int{}}}
	o.conns.max.Store(int64(o.MaxConns))
	t.ws = transport.Websocket{
		Implementation: protocolGuard{transport.CoderWebsocketImplementation{AcceptOptions: coderws.AcceptOptions{OriginPatterns: o.OriginPatterns}}},
		InitTimeout:    o.InitTimeout,
		// graphql-transport-ws: the server pings, the client pongs (graphql-ws
		// answers pings by itself); no pong within two intervals closes.
		PingPongInterval: o.PingInterval,
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			return initAuth(ctx, tokens, p)
		},
		ErrorFunc: func(ctx context.Context, err error) {
			if !errors.Is(err, context.Canceled) && !isClosedConn(err) {
				slog.Debug("websocket", "err", err)
			}
		},
	}
	return t
}

func (t *wsTransport) Supports(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

func (t *wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	addr := clientAddr(r)
	if !t.addrs.acquire(addr, t.o.MaxConnsPerAddr) {
		t.o.conns.refusedAddr.Add(1)
		// Before the upgrade, as every limit that is hit before GraphQL runs
		// (API-CONVENTIONS: 429 with Retry-After).
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("too many WebSocket connections from this address (the limit is %d); close one or retry later", t.o.MaxConnsPerAddr), http.StatusTooManyRequests)
		return
	}
	defer t.addrs.release(addr)
	open := &t.o.conns.open
	if open.Add(1) > int64(t.o.MaxConns) {
		open.Add(-1)
		t.o.conns.refusedInstance.Add(1)
		// Not this client's doing: the instance is full, as an overloaded
		// server is (503); another instance, or this one later, may serve it.
		w.Header().Set("Retry-After", "5")
		http.Error(w, fmt.Sprintf("this server holds as many WebSocket connections as it may (%d); retry later", t.o.MaxConns), http.StatusServiceUnavailable)
		return
	}
	defer open.Add(-1)
	// The server's ReadTimeout and WriteTimeout set deadlines on the
	// connection that would survive the hijack and cut a long-lived
	// connection after seconds; pings watch it instead.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(t.o.Closing, func() {
		cancel() // gqlgen closes the socket when the connection's context ends
	})
	defer stop()
	ctx = context.WithValue(ctx, wsConnKey{}, &wsConn{max: t.o.MaxSubscriptionsPerConn})
	t.ws.Do(w, r.WithContext(ctx), exec)
}

// liveConns counts the instance's WebSocket connections for /metrics.
type liveConns struct {
	open, max                    atomic.Int64
	refusedAddr, refusedInstance atomic.Int64
}

var (
	descLiveConns    = prometheus.NewDesc("storefront_live_connections", "WebSocket connections open on this instance.", nil, nil)
	descLiveConnsMax = prometheus.NewDesc("storefront_live_connections_max", "Most WebSocket connections this instance holds at once (--live-max-conns).", nil, nil)
	descLiveRefused  = prometheus.NewDesc("storefront_live_connections_refused_total",
		"WebSocket connections refused before the upgrade, by the bound met (address: 429, per client address; instance: 503, the instance's).", []string{"limit"}, nil)
)

func (*liveConns) Describe(ch chan<- *prometheus.Desc) {
	ch <- descLiveConns
	ch <- descLiveConnsMax
	ch <- descLiveRefused
}

func (c *liveConns) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descLiveConns, prometheus.GaugeValue, float64(c.open.Load()))
	ch <- prometheus.MustNewConstMetric(descLiveConnsMax, prometheus.GaugeValue, float64(c.max.Load()))
	ch <- prometheus.MustNewConstMetric(descLiveRefused, prometheus.CounterValue, float64(c.refusedAddr.Load()), "address")
	ch <- prometheus.MustNewConstMetric(descLiveRefused, prometheus.CounterValue, float64(c.refusedInstance.Load()), "instance")
}

// initAuth reads the token of connection_init's payload, {"Authorization":
// "Bearer …"} as an HTTP request carries it, and verifies it as an HTTP
// request's (auth.Tokens). A token that does not verify refuses the
// connection (close 4403): a client that sends one means to be someone, and
// a silent anonymous connection would hide the cause. A provider's token
// while its keys have not loaded closes with 1013 (try again later), which
// graphql-ws clients retry.
func initAuth(ctx context.Context, tokens *auth.Tokens, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	h := p.Authorization()
	if h == "" {
		return ctx, nil, nil
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok {
		return transport.WithWebsocketCloseCode(ctx, 4403), nil, errors.New("Forbidden: connection_init's Authorization is not a bearer token")
	}
	pr, err := tokens.Verify(ctx, strings.TrimSpace(tok))
	if errors.Is(err, errs.Unavailable) {
		return transport.WithWebsocketCloseCode(ctx, int(coderws.StatusTryAgainLater)), nil, fmt.Errorf("connection_init's token cannot be checked yet: %v", err)
	}
	if err != nil {
		return transport.WithWebsocketCloseCode(ctx, 4403), nil, fmt.Errorf("Forbidden: connection_init's token was refused: %v", err)
	}
	return auth.WithPrincipal(ctx, pr), nil, nil
}

// clientAddr is the client's IP address (the peer of the TCP connection).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func isClosedConn(err error) bool {
	return errors.Is(err, net.ErrClosed) || errors.Is(err, transport.ErrWebsocketClosed) ||
		coderws.CloseStatus(err) != -1
}

// addrCounts counts open connections per client address.
type addrCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *addrCounts) acquire(addr string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[addr] >= limit {
		return false
	}
	c.n[addr]++
	return true
}

func (c *addrCounts) release(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[addr]--; c.n[addr] <= 0 {
		delete(c.n, addr)
	}
}

type wsConnKey struct{}

// wsConn is one WebSocket connection's count of running subscriptions.
type wsConn struct {
	max     int
	running atomic.Int64
}

// liveOps keeps each transport to its kind of operation and bounds the
// subscriptions of a connection: subscriptions only over WebSocket (an HTTP
// request would get the first message and hang up), queries and mutations
// only over HTTP (where the Idempotency-Key header, the response cache and
// the request limits apply).
type liveOps struct{ share *sharedAnswers }

var _ interface {
	graphql.OperationInterceptor
	graphql.HandlerExtension
} = (*liveOps)(nil)

func (*liveOps) ExtensionName() string                   { return "LiveOperations" }
func (*liveOps) Validate(graphql.ExecutableSchema) error { return nil }

func (l *liveOps) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil {
		return next(ctx)
	}
	c, _ := ctx.Value(wsConnKey{}).(*wsConn)
	sub := oc.Operation.Operation == ast.Subscription
	switch {
	case c == nil && !sub:
		return next(ctx)
	case c == nil:
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{invalidInput(
			"subscriptions are served over WebSocket on /graphql with the graphql-transport-ws protocol, not over HTTP")}})
	case !sub:
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{invalidInput(
			"only subscriptions are served over WebSocket; send queries and mutations with POST /graphql")}})
	}
	if c.running.Add(1) > int64(c.max) {
		c.running.Add(-1)
		e := refusal(errs.RateLimited, "this connection already runs %d subscriptions, the most one connection may; complete one first or open another connection", c.max)
		return graphql.OneShot(&graphql.Response{Errors: gqlerror.List{e}})
	}
	var once sync.Once
	done := func() { once.Do(func() { c.running.Add(-1) }) }
	key := shareKey(oc)
	ctx, relay := live.WithRelay(ctx)
	responses := next(ctx)
	if relay.In == nil || key == "" || l.share == nil {
		// Not a goodsStock stream (refused, or another field): as it is.
		return func(ctx context.Context) *graphql.Response {
			resp := responses(ctx)
			if resp == nil {
				done() // the end of the stream: completed, stopped or disconnected
			}
			return resp
		}
	}
	return func(ctx context.Context) *graphql.Response {
		select {
		case v, ok := <-relay.In:
			if !ok {
				// The hub ended it (NOT_FOUND): gqlgen reads the close and
				// sends the subscription's error.
				close(relay.Out)
				resp := responses(ctx)
				if resp == nil {
					done()
				}
				return resp
			}
			resp := l.share.get(key, v, func() *graphql.Response {
				relay.Out <- v
				return responses(ctx)
			})
			if resp == nil {
				done()
			}
			return resp
		case <-ctx.Done():
			done()
			return nil
		}
	}
}

func invalidInput(msg string) *gqlerror.Error {
	return refusal(errs.InvalidInput, "%s", msg)
}

// isSubscription reports whether ctx's operation is a subscription.
func isSubscription(ctx context.Context) bool {
	if !graphql.HasOperationContext(ctx) {
		return false
	}
	op := graphql.GetOperationContext(ctx).Operation
	return op != nil && op.Operation == ast.Subscription
}
