package catalog

import (
	"context"
	"slices"
	"sync"
	"time"
	"weak"
)

// ReadSet records what one request read from the catalog: every product view
// it was given (the immutable *Goods of a snapshot), every goods it found
// missing, every listing. A finished answer built from those reads and
// nothing else can later be checked with Current: is it still exactly what
// the same anonymous request would be answered now? That is what the
// response cache (internal/server/respcache.go) stores next to the bytes.
//
// Views are compared by identity (held weakly). A view is immutable and a new one is built
// whenever anything it shows changes (an edit, or stock and volume seen to
// have moved after the TTL), while a revalidation that finds nothing moved
// keeps the very same view. So "the cache still holds this view, fresh" means
// "a new execution would read this view".
type ReadSet struct {
	mu    sync.Mutex
	reads []readKey
	full  bool
}

// maxReads bounds a ReadSet: an answer built from more reads than this (a
// hundred goods and many aliases) is not worth validating on every hit.
const maxReads = 512

// readKey is one read. A listing (list set) and a missing goods (missing
// set) are valid while no edit through this instance came after seq and
// the stock TTL has not passed since at; a view while the cache still
// serves it. The view is held weakly: a stored answer must not keep views
// alive that the product-view cache has let go (their memory is in neither
// cache's bound), and a view that was collected is no longer the cache's.
type readKey struct {
	id      int64
	view    weak.Pointer[Goods]
	missing bool
	list    bool
	seq     uint64
	at      time.Time
}

type readSetKey struct{}

// WithReadSet returns a context whose catalog reads (Service.Goods,
// Service.List) are recorded in the returned set. Only for anonymous
// requests: the set says nothing about what an admin's read may see.
func WithReadSet(ctx context.Context) (context.Context, *ReadSet) {
	rs := &ReadSet{}
	return context.WithValue(ctx, readSetKey{}, rs), rs
}

// Sources is what a finished answer was built from: the reads of a ReadSet,
// frozen once its request has finished, so that checking it takes no lock.
type Sources struct{ reads []readKey }

// Sources freezes the reads recorded so far; false when there were more
// than can be kept (maxReads), and such an answer cannot be validated.
// Call it once the request has finished reading.
func (rs *ReadSet) Sources() (*Sources, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.full {
		return nil, false
	}
	return &Sources{reads: slices.Clip(rs.reads)}, true
}

// Len is the number of reads.
func (src *Sources) Len() int { return len(src.reads) }

func (rs *ReadSet) add(k readKey) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if len(rs.reads) >= maxReads {
		rs.full = true
		return
	}
	rs.reads = append(rs.reads, k)
}

func noRecord(*Goods, error)       {}
func noRecordList([]*Goods, error) {}

// recordGoods is Service.Goods' hook: called before the read, it returns
// what to call with its result. The sequence number is taken first, so an
// edit of a missing goods committed after the read started raises its floor
// past it.
func (s *Service) recordGoods(ctx context.Context, id int64) func(*Goods, error) {
	rs, _ := ctx.Value(readSetKey{}).(*ReadSet)
	if rs == nil {
		return noRecord
	}
	seq, at := s.cache.seq.Add(1), s.cache.now()
	return func(g *Goods, err error) {
		if err == nil {
			rs.add(readKey{id: id, view: weak.Make(g), missing: g == nil, seq: seq, at: at})
		}
	}
}

// recordList is Service.List's hook, with the sequence number and time the
// listing took before its page query.
func (s *Service) recordList(ctx context.Context, seq uint64, at time.Time) func([]*Goods, error) {
	rs, _ := ctx.Value(readSetKey{}).(*ReadSet)
	if rs == nil {
		return noRecordList
	}
	return func(views []*Goods, err error) {
		if err != nil {
			return
		}
		rs.add(readKey{list: true, seq: seq, at: at})
		for _, g := range views {
			rs.add(readKey{id: g.ID, view: weak.Make(g), seq: seq, at: at})
		}
	}
}

// Current reports whether an answer built from src is still what an anonymous
// request would read now, without a database query: every view is the one
// the cache holds for its goods and would serve (read after the goods' last
// edit through this instance and younger than the stock TTL), no missing
// goods was edited (created) through this instance since, and no goods at
// all was edited through this instance since a listing, which is also at
// most one stock TTL old (goods created or put off shelf by another
// instance show within the TTL, as views do).
func (s *Service) Current(src *Sources) bool {
	reads := src.reads
	c := s.cache
	now := c.now()
	for i := range reads {
		r := &reads[i]
		switch {
		case r.list:
			if c.lastEdit.Load() > r.seq || now.Sub(r.at) >= c.ttl {
				return false
			}
		case r.missing:
			if c.floor(r.id).Load() > r.seq || now.Sub(r.at) >= c.ttl {
				return false
			}
		default:
			sl := c.peek(r.id)
			if sl == nil {
				return false
			}
			sn := sl.snap.Load()
			if sn == nil || r.view.Value() != sn.view || sn.seq <= c.floor(r.id).Load() || now.Sub(sn.checked) >= c.ttl {
				return false
			}
		}
	}
	return true
}

// StockTTL is how long a customer may be shown a view's stock: also how
// long a finished answer built from views may be served (and, over HTTP,
// be kept by a shared cache).
func (s *Service) StockTTL() time.Duration { return s.cache.ttl }
