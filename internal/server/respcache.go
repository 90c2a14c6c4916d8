package server

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"weak"

	"github.com/dgraph-io/ristretto/v2"
	"github.com/prometheus/client_golang/prometheus"

	"storefront/internal/catalog"
)

// DefaultResponseCacheMaxCost is NewResponseCache's maxCost when 0:
// the bytes of finished answers the response cache keeps. A 12-SKU product
// page is about 2 KB, the 500-SKU shoe's page with every SKU field 131 KB.
const DefaultResponseCacheMaxCost = 64 << 20

// ResponseCache keeps finished GraphQL answers (the bytes) of anonymous,
// cacheable queries (cacheable.go), keyed by document hash, operation name
// and variables. An entry is served only while catalog.Service.Current says
// that every product view, missing goods and listing it was built from is
// still what a new execution would read, so an edit through this instance is
// never followed by an older answer and stock is never older than the stock
// TTL, as without the cache. Like the product-view cache it is best effort:
// ristretto may drop a Set or evict any entry, which only costs an
// execution.
type ResponseCache struct {
	rc     *ristretto.Cache[string, *cachedAnswer]
	cat    *catalog.Service
	maxAge []string // Cache-Control of cacheable GET answers

	hits, misses, stale, bypasses, evicted, rejected, dropped atomic.Uint64
}

// cachedAnswer is one finished answer. Immutable once stored.
type cachedAnswer struct {
	key string // the full key: ristretto keeps only hashes of it
	// canonical and target are set on an alias entry (and nothing else
	// is): the key of the answer that the raw request with this key
	// decodes to, and that answer as last found, held weakly so that an
	// alias keeps no answer alive outside the cache's bound.
	canonical string
	target    weak.Pointer[cachedAnswer]
	body      []byte
	length    []string // Content-Length
	etag      []string // a strong ETag of body
	reads     *catalog.Sources
	// The operation's metrics, resolved once: a hit counts as an ok
	// request of that operation without asking the label maps again.
	requests prometheus.Counter
	latency  prometheus.Observer
}

// answerOverhead is an entry's bookkeeping beyond its key and body: the
// entry, its read set (a few dozen bytes per read) and ristretto's item.
const answerOverhead = 512

// NewResponseCache returns a response cache of at most maxCost bytes
// (0: DefaultResponseCacheMaxCost) validated against cat, for
// Options.ResponseCache; Close it on shutdown.
func NewResponseCache(cat *catalog.Service, maxCost int64) *ResponseCache {
	if maxCost <= 0 {
		maxCost = DefaultResponseCacheMaxCost
	}
	c := &ResponseCache{cat: cat}
	// A shared cache may keep a GET's answer for the stock TTL, rounded
	// down to whole seconds as max-age counts them.
	c.maxAge = []string{"public, max-age=" + strconv.FormatInt(int64(cat.StockTTL()/time.Second), 10)}
	rc, err := ristretto.NewCache(&ristretto.Config[string, *cachedAnswer]{
		// ≈10× the entries that fit, assuming ≈4 KiB per answer.
		NumCounters:        max(maxCost/(4<<10)*10, 1000),
		MaxCost:            maxCost,
		BufferItems:        64,
		IgnoreInternalCost: true,
		OnEvict:            func(*ristretto.Item[*cachedAnswer]) { c.evicted.Add(1) },
		OnReject:           func(*ristretto.Item[*cachedAnswer]) { c.rejected.Add(1) },
	})
	if err != nil {
		// Only zero sizes fail, and withDefaults rules those out.
		panic("server: ristretto: " + err.Error())
	}
	c.rc = rc
	return c
}

// lookup returns the answer stored under key if it is still current.
func (c *ResponseCache) lookup(key string) *cachedAnswer {
	a, ok := c.rc.Get(key)
	if !ok || a.key != key || a.canonical != "" {
		return nil
	}
	if !c.cat.Current(a.reads) {
		c.stale.Add(1)
		return nil
	}
	return a
}

// Aliases: an anonymous client sends the same bytes again and again (a
// product page's POST body, an Apollo client's GET). So the cache also maps
// a request's raw bytes (body or query string, and the method) to the key
// those bytes decode to, and a request seen before is looked up without
// decoding its JSON (cachedFront). Identical bytes decode to the same key,
// so an alias can only lead to the answer the key would. A request of up
// to maxRawAlias bytes is its own alias: ristretto's hash of it is far
// cheaper than a SHA-256, and the full alias kept in the entry is compared
// on every lookup, so no collision can lead elsewhere. A longer one is
// aliased by its SHA-256, so no alias costs more than that size. An alias
// costs its two keys; it holds its answer only weakly, so evicting the
// answer leaves a harmless alias that leads, once the answer is collected,
// to nothing.
func aliasKey(get bool, raw []byte) string { return string(appendAlias(nil, get, raw)) }

// appendAlias appends the alias of raw to dst.
func appendAlias(dst []byte, get bool, raw []byte) []byte {
	tag := byte('P')
	if get {
		tag = 'G'
	}
	if len(raw) > maxRawAlias {
		sum := sha256.Sum256(raw)
		return append(append(dst, tag|0x20), sum[:]...) // lower case: a hash, never raw bytes
	}
	return append(append(dst, tag), raw...)
}

// maxRawAlias is the longest request that is its own alias: a page's
// query and variables fit, and a flood of distinct requests adds at most
// this much per alias (within the cache's bound in bytes, as any entry).
const maxRawAlias = 2 << 10

// alias records that requests of raw key alias decode to a's key, and
// are answered a while it is current.
func (c *ResponseCache) alias(alias string, a *cachedAnswer) {
	if alias == "" {
		return
	}
	if e, ok := c.rc.Get(alias); ok && e.key == alias && e.canonical == a.key && e.target.Value() == a {
		return
	}
	if !c.rc.Set(alias, &cachedAnswer{key: alias, canonical: a.key, target: weak.Make(a)}, int64(len(alias)+len(a.key)+aliasOverhead)) {
		c.dropped.Add(1)
	}
}

// lookupAlias returns the current answer of the key alias leads to, and
// whether alias was known (then looking its key up again is pointless).
// The answer the alias last led to is tried first, which spares a lookup
// of its key; when it is gone or out of date, the key's answer is looked
// up (a newer one is stored after an execution) and the alias follows it.
func (c *ResponseCache) lookupAlias(alias string) (*cachedAnswer, bool) {
	e, ok := c.rc.Get(alias)
	if !ok || e.key != alias || e.canonical == "" {
		return nil, false
	}
	t := e.target.Value()
	if t != nil && c.cat.Current(t.reads) {
		return t, true
	}
	a := c.lookup(e.canonical)
	if a != nil && a != t {
		// alias may be a view of a pooled buffer (cachedFront): kept, it is copied.
		c.alias(strings.Clone(alias), a)
	}
	return a, true
}

const aliasOverhead = 128

// store keeps a finished answer; a body over a 64th of the bound is not
// kept, so one huge answer cannot flush the others.
func (c *ResponseCache) store(key string, body []byte, reads *catalog.Sources, m opCounters) *cachedAnswer {
	sum := sha256.Sum256(body)
	a := &cachedAnswer{
		key: key, body: body, reads: reads,
		length:   []string{strconv.Itoa(len(body))},
		etag:     []string{`"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`},
		requests: m.requests, latency: m.latency,
	}
	cost := int64(len(key)+len(body)+answerOverhead) + 48*int64(reads.Len())
	if cost > c.rc.MaxCost()/64 {
		return a
	}
	if !c.rc.Set(key, a, cost) {
		c.dropped.Add(1)
	}
	return a
}

// Close stops the cache's background goroutines.
func (c *ResponseCache) Close() { c.rc.Close() }

// Wait applies the writes ristretto has buffered, so that the next lookup
// finds them. For tests only: production code never waits for a Set.
func (c *ResponseCache) Wait() { c.rc.Wait() }

// opCounters are one operation's request counter and latency histogram.
type opCounters struct {
	requests prometheus.Counter
	latency  prometheus.Observer
}

var respCacheNames = [][2]string{
	{"storefront_response_cache_hits_total", "GraphQL requests answered with stored bytes: no execution, no database query."},
	{"storefront_response_cache_misses_total", "Cacheable anonymous queries executed because no current answer was stored (stale ones included)."},
	{"storefront_response_cache_stale_total", "Stored answers found out of date (an edit, moved stock, the stock TTL) and executed again; also counted as misses."},
	{"storefront_response_cache_bypasses_total", "GraphQL requests the response cache does not apply to: a token, a mutation, a field not declared cacheable, a refused request."},
	{"storefront_response_cache_evicted_total", "Stored answers evicted to stay under --response-cache-max-cost."},
	{"storefront_response_cache_rejected_total", "Answers ristretto's admission policy refused to store."},
	{"storefront_response_cache_dropped_total", "Answers not stored because ristretto's write buffer was full."},
}

// newRespCacheCollector exports the response cache's counters.
func newRespCacheCollector(c *ResponseCache) prometheus.Collector {
	return newCounters(respCacheNames, func() []uint64 {
		return []uint64{c.hits.Load(), c.misses.Load(), c.stale.Load(), c.bypasses.Load(), c.evicted.Load(), c.rejected.Load(), c.dropped.Load()}
	})
}
