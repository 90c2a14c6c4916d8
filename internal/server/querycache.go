package server

import (
	"container/list"
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// DefaultQueryCacheBytes is Options.QueryCacheBytes when unset: the memory
// bound of the parsed-query cache and, separately, of the persisted-query
// store. Thousands of typical queries fit in either.
const DefaultQueryCacheBytes = 16 << 20

// byteLRU is a least-recently-used cache bounded by the bytes its entries
// hold, not their number: both caches are keyed by query text that a client
// chooses, and a thousand entries of a 1 MB comment each were a gigabyte.
// An entry over a 64th of the bound is not kept at all, so a few huge
// queries cannot flush everything else (they are parsed again each time,
// at their sender's expense).
//
// It is not ristretto: a persisted query must be found by the very next
// request after its registration, and ristretto's Set is asynchronous, may
// be dropped, and may be refused by its admission policy, which would send
// a client round the register/not-found loop. Both caches are small and
// touched once per request, so one mutex is cheap.
type byteLRU[T any] struct {
	cost func(key string, v T) int64

	mu      sync.Mutex
	max     int64
	used    int64
	order   *list.List // of *lruEntry[T], most recently used first
	entries map[string]*list.Element
}

type lruEntry[T any] struct {
	key  string
	v    T
	cost int64
}

var _ graphql.Cache[string] = (*byteLRU[string])(nil)

func newByteLRU[T any](maxBytes int64, cost func(key string, v T) int64) *byteLRU[T] {
	return &byteLRU[T]{cost: cost, max: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

func (c *byteLRU[T]) Get(_ context.Context, key string) (T, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		c.order.MoveToFront(e)
		return e.Value.(*lruEntry[T]).v, true
	}
	var zero T
	return zero, false
}

func (c *byteLRU[T]) Add(_ context.Context, key string, v T) {
	cost := c.cost(key, v)
	if cost > c.max/64 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		old := e.Value.(*lruEntry[T])
		c.used += cost - old.cost
		old.v, old.cost = v, cost
		c.order.MoveToFront(e)
	} else {
		c.entries[key] = c.order.PushFront(&lruEntry[T]{key: key, v: v, cost: cost})
		c.used += cost
	}
	for c.used > c.max {
		last := c.order.Back()
		old := last.Value.(*lruEntry[T])
		c.order.Remove(last)
		delete(c.entries, old.key)
		c.used -= old.cost
	}
}

// bytes is what the cache holds, as its entries were charged.
func (c *byteLRU[T]) bytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// entryOverhead is a cache entry's own bookkeeping: list element, entry,
// map slot.
const entryOverhead = 200

// textCost charges a persisted query its hash and its text.
func textCost(key, query string) int64 { return int64(len(key)+len(query)) + entryOverhead }

// docCost charges a parsed query its text (the document keeps it: every
// node's position points into it, and the key is the same string) plus
// about docNodeBytes per node. gqlparser's documents measured 200–230
// bytes per node on dense queries and up to about 310 on tiny ones
// (TestDocCostCoversTheHeap keeps the estimate above what it measures).
func docCost(query string, doc *ast.QueryDocument) int64 {
	return int64(len(query)) + entryOverhead + docFixedBytes + docNodeBytes*int64(docNodes(doc))
}

const (
	docFixedBytes = 512
	docNodeBytes  = 320
)

// docNodes counts a document's operations, variable definitions,
// fragments, selections, arguments, values and directives.
func docNodes(doc *ast.QueryDocument) int {
	n := 0
	var value func(*ast.Value)
	value = func(v *ast.Value) {
		if v == nil {
			return
		}
		n++
		for _, c := range v.Children {
			value(c.Value)
		}
	}
	directives := func(ds ast.DirectiveList) {
		for _, d := range ds {
			n++
			for _, a := range d.Arguments {
				n++
				value(a.Value)
			}
		}
	}
	var set func(ast.SelectionSet)
	set = func(s ast.SelectionSet) {
		for _, sel := range s {
			n++
			switch f := sel.(type) {
			case *ast.Field:
				for _, a := range f.Arguments {
					n++
					value(a.Value)
				}
				directives(f.Directives)
				set(f.SelectionSet)
			case *ast.InlineFragment:
				directives(f.Directives)
				set(f.SelectionSet)
			case *ast.FragmentSpread:
				directives(f.Directives)
			}
		}
	}
	for _, op := range doc.Operations {
		n += 1 + len(op.VariableDefinitions)
		for _, v := range op.VariableDefinitions {
			value(v.DefaultValue)
		}
		directives(op.Directives)
		set(op.SelectionSet)
	}
	for _, f := range doc.Fragments {
		n++
		directives(f.Directives)
		set(f.SelectionSet)
	}
	return n
}
