// Package catalog owns goods, specs, spec values and SKUs: reading product
// views and (for admins) editing them without breaking history.
package catalog

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/enums"
	"storefront/errs"
	"storefront/paging"
	"storefront/store"
)

// Service reads and edits the catalog.
type Service struct {
	db    *store.DB
	cfg   Config
	cache *viewCache
}

// New returns a catalog service on db with its own product-view cache; Close
// it on shutdown.
func New(db *store.DB, cfg Config) *Service {
	cfg = cfg.withDefaults()
	return &Service{db: db, cfg: cfg, cache: newViewCache(cfg)}
}

// Viewer is what the catalog needs to know about the caller.
type Viewer struct{ Admin bool }

// visibleTo limits customers and anonymous visitors to on-shelf goods;
// soft-deleted goods are hidden from everyone.
func visibleTo(v Viewer, q *ent.GoodsQuery) *ent.GoodsQuery {
	q = q.Where(goods.DeleteTimeIsNil())
	if !v.Admin {
		q = q.Where(goods.StatusEQ(enums.GoodsOnShelf))
	}
	return q
}

// Goods returns the product view of one goods, or nil when it does not
// exist or is not visible to v. The view may come from the cache: its stock
// lags by at most Config.StockTTL, so checkout must not trust it.
func (s *Service) Goods(ctx context.Context, v Viewer, id int64) (*Goods, error) {
	record := s.recordGoods(ctx, id) // what a cached answer was built from (snapshot_keys.go)
	g, err := s.view(ctx, id, s.cache.maxAge(v))
	record(g, err)
	if err != nil || g == nil || !g.visibleTo(v) {
		return nil, err
	}
	return g, nil
}

// ListParams selects a page of goods.
type ListParams struct {
	First  int
	After  string
	Status *enums.GoodsStatus
}

// GoodsPage is one page of a goods connection.
type GoodsPage struct {
	Goods       []*Goods
	HasNextPage bool
}

// List pages through visible goods in id order (stable under inserts).
func (s *Service) List(ctx context.Context, v Viewer, p ListParams) (*GoodsPage, error) {
	first, err := paging.Size(p.First)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
	}
	// Taken before the page query: views loaded below read no earlier.
	seq, now := s.cache.seq.Add(1), s.cache.now()
	q := visibleTo(v, s.db.Client.Goods.Query())
	if p.Status != nil {
		q = q.Where(goods.StatusEQ(*p.Status))
	}
	if p.After != "" {
		after, err := paging.Decode(cursorKind, p.After)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errs.InvalidInput, err)
		}
		q = q.Where(goods.IDGT(after))
	}
	rows, err := q.Order(goods.ByID()).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("listing goods: %w", err))
	}
	page := &GoodsPage{}
	rows, page.HasNextPage = paging.Trim(rows, first)
	page.Goods, err = s.cachedViews(ctx, rows, s.cache.maxAge(v), seq, now)
	s.recordList(ctx, seq, now)(page.Goods, err) // what a cached answer was built from (snapshot_keys.go)
	return page, err
}

// Cursor is the opaque connection cursor of a row.
func Cursor(id int64) string { return paging.Cursor(cursorKind, id) }

const cursorKind = "goods"

// changed is called after every committed catalog edit of a goods (its
// version was bumped), so this instance's next read shows the edit.
func (s *Service) changed(goodsID int64) { s.cache.edited(goodsID) }

// IDByCode finds a live goods by its code (0 when none).
func (s *Service) IDByCode(ctx context.Context, code string) (int64, error) {
	id, err := s.db.Client.Goods.Query().Where(goods.Code(code), goods.DeleteTimeIsNil()).FirstID(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, store.Classify(fmt.Errorf("finding goods %q: %w", code, err))
	}
	return id, nil
}
