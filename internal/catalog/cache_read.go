package catalog

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/internal/platform/store"
)

// view returns the goods' product view for any viewer (visibility is the
// caller's job), from the cache when it is younger than maxAge, else after one
// freshness query (older) or a full load of four queries (not cached, or
// edited through this instance). nil when the goods does not exist.
func (s *Service) view(ctx context.Context, id int64, maxAge time.Duration) (*Goods, error) {
	c := s.cache
	sl := c.lookup(id)
	if sl != nil {
		if sn := sl.snap.Load(); c.fresh(id, sn, maxAge) {
			c.hits.Add(1)
			return sn.view, nil
		}
	} else {
		sl = c.slotFor(id)
	}
	// One request per goods goes to the database; the rest wait for its
	// snapshot rather than repeating its queries.
	sl.load.Lock()
	defer sl.load.Unlock()
	defer c.abandon(sl)
	sn := sl.snap.Load()
	if c.fresh(id, sn, maxAge) {
		c.hits.Add(1)
		return sn.view, nil
	}
	seq, now := c.seq.Add(1), c.now()
	switch {
	case sn == nil:
		c.misses.Add(1)
	case sn.seq > c.floor(id).Load():
		// Only the TTL passed: most of the time just stock moved.
		f, err := loadFreshness(ctx, s.db.Client, id)
		if err != nil || f == nil {
			return nil, err
		}
		if f.sameCatalog(sn.view) {
			c.revalidations.Add(1)
			v := sn.view
			if !f.sameStock(v) {
				v = v.withStock(f.skuLive)
			}
			c.publish(sl, &snapshot{view: v, seq: seq, checked: now})
			return v, nil
		}
		c.reloads.Add(1)
	default:
		c.reloads.Add(1) // edited through this instance
	}
	row, err := s.db.Client.Goods.Query().Where(goods.ID(id)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("loading goods %d: %w", id, err))
	}
	views, err := loadViews(ctx, s.db.Client, []*ent.Goods{row})
	if err != nil {
		return nil, err
	}
	c.publish(sl, &snapshot{view: views[0], seq: seq, checked: now})
	return views[0], nil
}

// cachedViews returns the views of a page of goods rows (already filtered for
// the viewer), taking cached views of the same version younger than maxAge and
// loading all the others together: three queries at most, whatever the page
// size. seq and now were taken before rows were read.
func (s *Service) cachedViews(ctx context.Context, rows []*ent.Goods, maxAge time.Duration, seq uint64, now time.Time) ([]*Goods, error) {
	c := s.cache
	out := make([]*Goods, len(rows))
	var missing []*ent.Goods
	var at []int
	for i, r := range rows {
		if sl := c.peek(r.ID); sl != nil {
			sn := sl.snap.Load()
			if c.fresh(r.ID, sn, maxAge) && sn.view.Version == r.Version && sn.view.Status == r.Status {
				c.hits.Add(1)
				out[i] = sn.view
				continue
			}
		}
		c.misses.Add(1)
		missing = append(missing, r)
		at = append(at, i)
	}
	views, err := loadViews(ctx, s.db.Client, missing)
	if err != nil {
		return nil, err
	}
	for j, v := range views {
		out[at[j]] = v
		c.publish(c.slotFor(v.ID), &snapshot{view: v, seq: seq, checked: now})
	}
	return out, nil
}
