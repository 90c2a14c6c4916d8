package server

import (
	"encoding/json"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"storefront/internal/catalog"
)

// sharedAnswers lets the subscribers of one goods that run the same operation
// (the same document, operation name and variables) share the marshalled
// message of each view: gqlgen marshals every subscriber's message field by
// field (a goroutine per list element), which made a push to a thousand
// subscribers cost more CPU than the orders that caused it
// (docs/benchmarks.md, "Live stock"). The first subscriber to meet a view
// marshals it; the others wait for that and send the same bytes. A view is
// immutable and visibility was checked by the hub for each subscriber, so
// the bytes are the ones each would have built.
type sharedAnswers struct {
	mu sync.Mutex
	m  map[string]*sharedAnswer
}

type sharedAnswer struct {
	view *catalog.Goods
	done chan struct{}
	resp *graphql.Response // nil: the producer failed; waiters build their own
}

// maxSharedAnswers bounds the map: one entry per goods and operation shape
// watched; past it the map starts over (entries are rebuilt on the next push).
const maxSharedAnswers = 10_000

func newSharedAnswers() *sharedAnswers { return &sharedAnswers{m: map[string]*sharedAnswer{}} }

// get returns the answer for view under key, building it with produce once.
func (s *sharedAnswers) get(key string, view *catalog.Goods, produce func() *graphql.Response) *graphql.Response {
	s.mu.Lock()
	if e := s.m[key]; e != nil && e.view == view {
		s.mu.Unlock()
		<-e.done
		if e.resp != nil {
			return e.resp
		}
		return produce()
	}
	e := &sharedAnswer{view: view, done: make(chan struct{})}
	if len(s.m) >= maxSharedAnswers {
		clear(s.m)
	}
	s.m[key] = e
	s.mu.Unlock()
	resp := produce()
	if resp != nil && len(resp.Errors) == 0 {
		e.resp = resp
	}
	close(e.done)
	return resp
}

// shareKey identifies what an operation's messages depend on besides the view.
func shareKey(oc *graphql.OperationContext) string {
	vars, err := json.Marshal(oc.Variables)
	if err != nil {
		return ""
	}
	return oc.RawQuery + "\x00" + oc.OperationName + "\x00" + string(vars)
}
