// Package live pushes product pages' stock to subscribers as it changes.
//
// One Hub per instance watches the goods its subscribers watch: once per
// interval it reads the stock version of every watched goods in one
// statement (inventory.WatchVersions), and reads the product view again only
// for the goods whose version moved (catalog.Service.Latest). Every
// subscriber of a goods shares that read, so the database work grows with the
// goods watched, not with the watchers, and a goods nobody watches costs
// nothing. Orders placed through any instance move the version in the shared
// database, so every instance sees them within one interval, with no server
// of its own between the instances.
package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// DefaultInterval is Config.Interval when unset: at most one message per
// goods and subscriber every 250 ms, and at most four version reads a second
// per instance, however many goods are watched (up to 1000 per statement).
const DefaultInterval = 250 * time.Millisecond

// Config configures a Hub.
type Config struct {
	// Interval is how often watched goods are checked; changes within one
	// interval reach subscribers as one message.
	Interval time.Duration
}

// Hub fans the stock of watched goods out to their subscribers.
type Hub struct {
	db       *store.DB
	cat      *catalog.Service
	interval time.Duration

	mu     sync.Mutex
	topics map[int64]*topic
	subs   int

	stop context.CancelFunc
	done chan struct{}

	polls, reads, pushes atomic.Uint64
}

// topic is one watched goods and everyone watching it.
type topic struct {
	id   int64
	subs map[*sub]struct{}
	// ready is closed once the first subscriber's read of the view ended
	// (view or err set); later subscribers wait for it rather than read too.
	ready chan struct{}
	view  *catalog.Goods // the latest view pushed; nil: the goods does not exist
	err   error
	// ver is the version view was read at or after; known is false until the
	// first poll that saw this topic.
	ver   inventory.Version
	found bool
	known bool
}

// sub is one subscription. ch holds at most the latest view not yet taken:
// a slow client skips intermediate states instead of queueing them.
type sub struct {
	ch     chan *catalog.Goods
	viewer catalog.Viewer
	end    func(error)
	stop   func() bool // unregisters the context.AfterFunc
	sent   bool
	closed bool
}

// New starts a hub on db; Close stops it.
func New(db *store.DB, cat *catalog.Service, cfg Config) *Hub {
	settings.Positive(&cfg.Interval, DefaultInterval)
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{db: db, cat: cat, interval: cfg.Interval, topics: map[int64]*topic{}, stop: cancel, done: make(chan struct{})}
	go h.run(ctx)
	return h
}

// Interval is the hub's polling interval.
func (h *Hub) Interval() time.Duration { return h.interval }

// Close stops polling and ends every subscription (its channel closes).
func (h *Hub) Close() {
	h.stop()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.topics {
		for s := range t.subs {
			h.endLocked(t, s, nil)
		}
	}
}

// Subscribe watches goods id for viewer v until ctx ends. The channel's
// first value is the goods' current state, then one value per change (at
// most one per interval). When the goods stops being visible to v (off
// shelf, deleted), end is called with an errs.NotFound error and the channel
// closes; when ctx ends, nothing more is sent. An unknown or invisible goods
// is errs.NotFound at once.
func (h *Hub) Subscribe(ctx context.Context, v catalog.Viewer, id int64, end func(error)) (<-chan *catalog.Goods, error) {
	s := &sub{ch: make(chan *catalog.Goods, 1), viewer: v, end: end}
	h.mu.Lock()
	t := h.topics[id]
	first := t == nil
	if first {
		t = &topic{id: id, subs: map[*sub]struct{}{}, ready: make(chan struct{})}
		h.topics[id] = t
	}
	// Registered before the first read: a change after it is pushed.
	t.subs[s] = struct{}{}
	h.subs++
	h.mu.Unlock()

	if first {
		// The hub's context, not the caller's: the read serves every
		// subscriber waiting for it.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		view, err := h.cat.Latest(rctx, id)
		cancel()
		h.reads.Add(1)
		h.mu.Lock()
		t.view, t.err = view, err
		close(t.ready)
		h.mu.Unlock()
	} else {
		select {
		case <-t.ready:
		case <-ctx.Done():
			h.remove(t, s)
			return nil, ctx.Err()
		}
	}

	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case t.err != nil:
		h.dropLocked(t, s)
		if first {
			// A failed read is not remembered: the next subscriber reads again.
			h.forgetLocked(t)
		}
		return nil, t.err
	case t.view == nil || !t.view.VisibleTo(v):
		h.dropLocked(t, s)
		return nil, fmt.Errorf("%w: goods %d", errs.NotFound, id)
	}
	if !s.sent {
		s.ch <- t.view // empty: only the hub sends, under h.mu
		s.sent = true
	}
	s.stop = context.AfterFunc(ctx, func() { h.remove(t, s) })
	return relayed(ctx, s.ch), nil
}

// remove unregisters s (its context ended).
func (h *Hub) remove(t *topic, s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(t, s)
}

func (h *Hub) dropLocked(t *topic, s *sub) {
	if _, ok := t.subs[s]; !ok {
		return
	}
	delete(t.subs, s)
	h.subs--
	if len(t.subs) == 0 {
		h.forgetLocked(t)
	}
}

// forgetLocked stops watching t's goods (nobody watches it any more).
func (h *Hub) forgetLocked(t *topic) {
	if h.topics[t.id] == t {
		delete(h.topics, t.id)
	}
}

// endLocked ends s with err (nil: the hub is closing) and closes its channel.
func (h *Hub) endLocked(t *topic, s *sub, err error) {
	if s.closed {
		return
	}
	h.dropLocked(t, s)
	if s.stop != nil {
		s.stop()
	}
	if err != nil && s.end != nil {
		s.end(err) // before close: the reader sees the error once the channel closes
	}
	s.closed = true
	close(s.ch)
}

func (h *Hub) run(ctx context.Context) {
	defer close(h.done)
	tick := time.NewTicker(h.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := h.poll(ctx); err != nil && ctx.Err() == nil {
			slog.Warn("live stock: polling watched goods", "err", err)
		}
	}
}

// poll checks every watched goods once: one version read for all of them,
// one view read per goods whose version moved. Nothing when nobody watches.
func (h *Hub) poll(ctx context.Context) error {
	h.mu.Lock()
	ids := make([]int64, 0, len(h.topics))
	for id, t := range h.topics {
		if isClosed(t.ready) && t.err == nil {
			ids = append(ids, id)
		}
	}
	h.mu.Unlock()
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	rctx, cancel := context.WithTimeout(ctx, max(10*h.interval, 5*time.Second))
	defer cancel()
	h.polls.Add(1)
	h.reads.Add(uint64((len(ids) + 999) / 1000))
	vers, err := inventory.WatchVersions(rctx, h.db.Client, ids)
	if err != nil {
		return err
	}
	var errList []error
	for _, id := range ids {
		ver, found := vers[id]
		h.mu.Lock()
		t := h.topics[id]
		same := t == nil || (t.known && t.ver == ver && t.found == found)
		h.mu.Unlock()
		if same {
			continue
		}
		var view *catalog.Goods
		if found {
			// Read after the version: the view is at least as new as ver.
			h.reads.Add(1)
			if view, err = h.cat.Latest(rctx, id); err != nil {
				errList = append(errList, err) // ver stays unknown: read again next time
				continue
			}
		}
		h.mu.Lock()
		if h.topics[id] == t {
			t.ver, t.found, t.known = ver, found, true
			if !sameStock(t.view, view) {
				t.view = view
				h.pushLocked(t)
			}
		}
		h.mu.Unlock()
	}
	return errors.Join(errList...)
}

// pushLocked hands t's view to every subscriber, replacing a view a slow
// one has not taken yet; subscribers that may no longer see the goods end
// with NOT_FOUND.
func (h *Hub) pushLocked(t *topic) {
	for s := range t.subs {
		if !s.sent {
			continue // its first message (an older state) is not out yet; Subscribe sends the current one
		}
		if t.view == nil || !t.view.VisibleTo(s.viewer) {
			h.endLocked(t, s, fmt.Errorf("%w: goods %d is no longer on sale", errs.NotFound, t.id))
			continue
		}
		select {
		case <-s.ch: // superseded
		default:
		}
		s.ch <- t.view
		h.pushes.Add(1)
	}
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// sameStock reports whether b shows what a shows to a live subscriber: the
// goods' version and status, and every SKU's stock, lock, status and price.
// Sold volume moves on payment without changing any of that.
func sameStock(a, b *catalog.Goods) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a == b {
		return true
	}
	if a.Version != b.Version || a.Status != b.Status {
		return false
	}
	as, bs := a.SkuList(true), b.SkuList(true)
	if len(as) != len(bs) {
		return false
	}
	for i := range as {
		x, y := as[i], bs[i]
		if x.ID != y.ID || x.Stock != y.Stock || x.LockedStock != y.LockedStock || x.Status != y.Status || x.SellPrice != y.SellPrice {
			return false
		}
	}
	return true
}

// Stats are the hub's counters, for /metrics and tests.
type Stats struct {
	Subscribers, Goods   int
	Polls, Reads, Pushes uint64
}

// Stats returns the hub's counters now.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Stats{Subscribers: h.subs, Goods: len(h.topics), Polls: h.polls.Load(), Reads: h.reads.Load(), Pushes: h.pushes.Load()}
}
