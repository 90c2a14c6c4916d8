// Package catalog owns goods, specs, spec values and SKUs: reading product
// views and (for admins) editing them without breaking history.
package catalog

import (
	"cmp"
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Service reads and edits the catalog.
type Service struct {
	db    *store.DB
	cfg   Config
	cache *viewCache
	cats  treeCache
}

// New returns a catalog service on db with its own product-view cache; Close
// it on shutdown.
func New(db *store.DB, cfg Config) *Service {
	cfg = cfg.withDefaults()
	return &Service{db: db, cfg: cfg, cache: newViewCache(cfg)}
}

// Viewer is what the catalog needs to know about the caller.
type Viewer struct{ Admin bool }

// visibleTo limits customers and anonymous visitors to on-shelf goods
// (goods are never deleted: RECYCLED is the end of a goods' life).
func visibleTo(v Viewer, q *ent.GoodsQuery) *ent.GoodsQuery {
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

// ListParams selects a page of goods (GraphQL's goodsList).
type ListParams struct {
	First  int
	After  string
	Status *enums.GoodsStatus // admins only: customers see ON_SHELF goods
	// CategoryID lists the category and everything below it.
	CategoryID         *int64
	Search             string
	PriceMin, PriceMax *money.Money
	InStock            *bool
	Sort               listing.Field // "" is listing.ByID
	Desc               bool
	// Count asks for the total over every page.
	Count bool
}

// GoodsPage is one page of a goods connection.
type GoodsPage struct {
	Goods       []*Goods
	Cursors     []string
	HasNextPage bool
	Total       int64
}

// List reads one page of the listing (package listing: an index range in
// the order asked for) and hands out the views of its goods.
func (s *Service) List(ctx context.Context, v Viewer, p ListParams) (*GoodsPage, error) {
	lp := listing.Params{
		Scope: valueOr(p.CategoryID, listing.All), Search: p.Search, PriceMin: p.PriceMin, PriceMax: p.PriceMax,
		InStock: p.InStock, Sort: cmp.Or(p.Sort, listing.ByID), Desc: p.Desc, First: p.First, After: p.After, Count: p.Count,
	}
	switch {
	case !v.Admin:
		lp.Statuses = []enums.GoodsStatus{enums.GoodsOnShelf}
	case p.Status != nil:
		lp.Statuses = []enums.GoodsStatus{*p.Status}
	}
	// Taken before the page query: views loaded below read no earlier.
	seq, now := s.cache.seq.Add(1), s.cache.now()
	lst, err := listing.Query(ctx, s.db.Client, lp)
	if err != nil {
		return nil, err
	}
	rows, err := visibleTo(v, s.db.Client.Goods.Query()).Where(goods.IDIn(lst.IDs...)).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("listing goods: %w", err))
	}
	// In the listing's order; a goods edited away between the two reads
	// (off shelf, deleted) is left out rather than shown as it is now.
	byID := make(map[int64]*ent.Goods, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
	}
	page := &GoodsPage{HasNextPage: lst.HasNext, Total: lst.Total}
	ordered := make([]*ent.Goods, 0, len(rows))
	for i, id := range lst.IDs {
		if r := byID[id]; r != nil && (lp.Statuses == nil || r.Status == lp.Statuses[0]) {
			ordered = append(ordered, r)
			page.Cursors = append(page.Cursors, lst.Cursors[i])
		}
	}
	page.Goods, err = s.cachedViews(ctx, ordered, s.cache.maxAge(v), seq, now)
	s.recordList(ctx, seq, now)(page.Goods, err) // what a cached answer was built from (snapshot_keys.go)
	return page, err
}

// GoodsBySlug is Goods for the goods a slug names (nil when none is
// visible to v).
func (s *Service) GoodsBySlug(ctx context.Context, v Viewer, slug string) (*Goods, error) {
	seq, now := s.cache.seq.Add(1), s.cache.now()
	id, err := s.db.Client.Goods.Query().Where(goods.Slug(slug)).FirstID(ctx)
	if ent.IsNotFound(err) {
		// Recorded like a listing: valid until an edit through this instance
		// (which may give the slug to a goods) or the stock TTL.
		s.recordList(ctx, seq, now)(nil, nil)
		return nil, nil
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("finding goods %q: %w", slug, err))
	}
	return s.Goods(ctx, v, id)
}

// changed is called after every committed catalog edit of a goods (its
// version was bumped), so this instance's next read shows the edit.
func (s *Service) changed(goodsID int64) { s.cache.edited(goodsID) }

// IDByCode finds a live goods by its code (0 when none).
func (s *Service) IDByCode(ctx context.Context, code string) (int64, error) {
	id, err := s.db.Client.Goods.Query().Where(goods.Code(code)).FirstID(ctx)
	if ent.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, store.Classify(fmt.Errorf("finding goods %q: %w", code, err))
	}
	return id, nil
}
