package server

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vektah/gqlparser/v2/ast"
	"golang.org/x/time/rate"

	"storefront/internal/platform/auth"
)

// Rate is one token bucket: PerSecond tokens flow in, at most Burst are
// kept. Each root field of a mutation takes one. PerSecond 0 is no limit.
type Rate struct {
	PerSecond float64
	Burst     int
}

// RateLimits configures NewRateLimiter. docs/operations.md ("Rate limits")
// says why the defaults.
type RateLimits struct {
	// Anonymous is the bucket of each client address (an IPv6 client's /64).
	Anonymous Rate
	// Account is the bucket of each verified token's subject, customer or
	// admin: never shared with the anonymous traffic of the same address.
	Account Rate
	// TrustedProxies are the peers whose X-Forwarded-For is believed.
	TrustedProxies []netip.Prefix
	// MaxBuckets bounds the buckets kept of each kind (0: DefaultMaxBuckets).
	MaxBuckets int
}

// The defaults of serve's flags. A shopper writes a cart line at a time,
// a few a second while clicking, so 60 at once and one every half second
// after that never stand in the way of one; one client address
// creating ~1,000 carts a second in a flood gets 2. A
// token's subject may write 100 times as fast: accounts are issued by the
// shop and can be revoked, admins edit in bulk, and the e2e suites hammer
// placeOrder from one subject (TestResponseCacheMixedLoad placed 750 orders
// from the demo customer in 5 s on a loaded machine, about 2,250 expected
// on an idle one; 2,000 at once plus 200 a second allow 3,000).
const (
	DefaultAnonymousPerSecond = 2
	DefaultAnonymousBurst     = 60
	DefaultAccountPerSecond   = 200
	DefaultAccountBurst       = 2000
	DefaultMaxBuckets         = 1 << 16
)

// DefaultRateLimits are serve's defaults.
func DefaultRateLimits() RateLimits {
	return RateLimits{
		Anonymous: Rate{DefaultAnonymousPerSecond, DefaultAnonymousBurst},
		Account:   Rate{DefaultAccountPerSecond, DefaultAccountBurst},
	}
}

// RateLimiter limits the mutations of each client: every mutation, not a
// list of them, so that a mutation added later is limited from its first
// day, and one that refuses anonymous callers costs a flood nothing to
// refuse. Queries are not limited: they store nothing, and the response
// cache and the query limits bound what they cost.
type RateLimiter struct {
	trusted   []netip.Prefix
	anonymous *buckets[netip.Addr]
	account   *buckets[accountKey]
	refused   *prometheus.CounterVec
}

// NewRateLimiter returns a limiter for Options.RateLimiter.
func NewRateLimiter(l RateLimits) *RateLimiter {
	if l.MaxBuckets <= 0 {
		l.MaxBuckets = DefaultMaxBuckets
	}
	return &RateLimiter{
		trusted:   l.TrustedProxies,
		anonymous: newBuckets[netip.Addr](l.Anonymous, l.MaxBuckets),
		account:   newBuckets[accountKey](l.Account, l.MaxBuckets),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "storefront_rate_limited_total",
			Help: "GraphQL mutations refused with RATE_LIMITED, by the bucket's kind (anonymous: per client address; account: per token subject).",
		}, []string{"kind"}),
	}
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// prefixes ("10.0.0.0/8, 127.0.0.1").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(part)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q is neither an address nor a CIDR prefix", part)
		}
		a = a.Unmap()
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// admit takes the tokens of op's root fields from the caller's bucket, or
// says how long to wait before the bucket would have them.
func (l *RateLimiter) admit(r *http.Request, op *ast.OperationDefinition, frags ast.FragmentDefinitionList) (wait time.Duration, refused bool) {
	if op.Operation != ast.Mutation {
		return 0, false
	}
	n := rootFields(op.SelectionSet, frags, nil)
	now := time.Now()
	if p := auth.FromContext(r.Context()); p.UserID != "" {
		wait, refused = l.account.take(accountKey{p.Role, p.UserID}, n, now)
		if refused {
			l.refused.WithLabelValues("account").Inc()
		}
		return wait, refused
	}
	wait, refused = l.anonymous.take(l.clientKey(r), n, now)
	if refused {
		l.refused.WithLabelValues("anonymous").Inc()
	}
	return wait, refused
}

// accountKey names a token subject's bucket: a struct, not role+":"+sub,
// so that no string is built per request.
type accountKey struct {
	role auth.Role
	sub  string
}

// rootFields counts the fields a mutation runs, through fragments (each
// spread counted where it stands) and ignoring @skip and @include, which
// can only make the count larger than what runs.
func rootFields(s ast.SelectionSet, frags ast.FragmentDefinitionList, open map[string]bool) int {
	n := 0
	for _, sel := range s {
		switch f := sel.(type) {
		case *ast.Field:
			if f.Name != "__typename" {
				n++
			}
		case *ast.InlineFragment:
			n += rootFields(f.SelectionSet, frags, open)
		case *ast.FragmentSpread:
			if def := frags.ForName(f.Name); def != nil && !open[f.Name] {
				if open == nil {
					open = map[string]bool{} // only an operation that spreads fragments needs it
				}
				open[f.Name] = true // validation refuses cycles; this only makes sure
				n += rootFields(def.SelectionSet, frags, open)
				delete(open, f.Name)
			}
		}
	}
	return n
}

// clientKey is the client's address: the connection's peer, or, when the
// peer is a trusted proxy, the nearest address in X-Forwarded-For that is
// not one (read from the right: the entries on the left are whatever the
// client wrote). An IPv6 client is its /64, which one subscriber usually
// has whole.
func (l *RateLimiter) clientKey(r *http.Request) netip.Addr {
	addr := peer(r)
	if l.isTrusted(addr) {
		hops := r.Header.Values("X-Forwarded-For")
	walk:
		for i := len(hops) - 1; i >= 0; i-- {
			list := strings.Split(hops[i], ",")
			for j := len(list) - 1; j >= 0; j-- {
				a, err := parseHop(list[j])
				if err != nil {
					break walk // junk: the last trusted hop stands for the client
				}
				addr = a
				if !l.isTrusted(a) {
					break walk
				}
			}
		}
	}
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.Addr()
	}
	return addr
}

func (l *RateLimiter) isTrusted(a netip.Addr) bool {
	for _, p := range l.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the connection's remote address (the zero Addr when it has none,
// as in a handler test without one: all such requests share a bucket).
func peer(r *http.Request) netip.Addr {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a
// port or in brackets.
func parseHop(s string) (netip.Addr, error) {
	s = strings.TrimSpace(s)
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap(), nil
	}
	a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"))
	return a.Unmap(), err
}

// retryAfter is a Retry-After value: whole seconds, rounded up, at least 1.
func retryAfter(d time.Duration) string {
	return strconv.FormatInt(max(1, int64(math.Ceil(d.Seconds()))), 10)
}

// buckets are the token buckets of one kind, bounded in number. A bucket
// that has been idle long enough to fill up is the same as a new one, so
// evicting it changes no answer; that is what sweep does, at most once a
// refill period or when the map is full. When it is full of busy buckets,
// an eighth of them go (map order: arbitrary): those clients start again
// with a full bucket, which only matters to someone holding more addresses
// than MaxBuckets, who could have had fresh buckets anyway.
type buckets[K comparable] struct {
	limit  rate.Limit
	burst  int
	refill time.Duration // from empty to full
	max    int

	mu        sync.Mutex
	m         map[K]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time // of the last take
}

func newBuckets[K comparable](r Rate, maxBuckets int) *buckets[K] {
	b := &buckets[K]{limit: rate.Limit(r.PerSecond), burst: max(r.Burst, 1), max: maxBuckets, m: map[K]*bucket{}}
	if r.PerSecond > 0 {
		b.refill = time.Duration(float64(b.burst) / r.PerSecond * float64(time.Second))
	}
	return b
}

// take removes n tokens from key's bucket, or, when there are not that
// many, none, and returns how long until there would be. A request of more
// tokens than the burst never fits: it is refused with the time the whole
// bucket takes to fill.
func (b *buckets[K]) take(key K, n int, now time.Time) (time.Duration, bool) {
	if b.limit == 0 || n == 0 {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.lastSweep) >= b.refill {
		b.sweep(now)
	}
	e := b.m[key]
	if e == nil {
		if len(b.m) >= b.max {
			b.sweep(now)
		}
		e = &bucket{lim: rate.NewLimiter(b.limit, b.burst)}
		b.m[key] = e
	}
	e.last = now
	if n > b.burst {
		return b.refill, true
	}
	res := e.lim.ReserveN(now, n)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now) // nothing was taken
		return d, true
	}
	return 0, false
}

// sweep drops the buckets idle for a refill period (full again), and when
// that leaves the map full, an eighth of it. Called with mu held.
func (b *buckets[K]) sweep(now time.Time) {
	b.lastSweep = now
	for k, e := range b.m {
		if now.Sub(e.last) >= b.refill {
			delete(b.m, k)
		}
	}
	if len(b.m) < b.max {
		return
	}
	drop := max(b.max/8, 1)
	for k := range b.m {
		if drop == 0 {
			break
		}
		delete(b.m, k)
		drop--
	}
}

// size is the number of buckets kept (tests).
func (b *buckets[K]) size() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
