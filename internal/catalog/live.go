package catalog

import "context"

// Latest returns the goods' product view as the database has it now, for
// any viewer (nil when the goods does not exist): one freshness query when
// the cached catalog part still holds, a full load otherwise. Package live
// calls it only for watched goods whose stock version moved, and the view it
// reads refreshes the product-page cache too.
func (s *Service) Latest(ctx context.Context, id int64) (*Goods, error) {
	return s.view(ctx, id, 0)
}

// VisibleTo applies Service.Goods' visibility rule to a view already held
// (a live subscription checks it again on every change).
func (g *Goods) VisibleTo(v Viewer) bool { return g.visibleTo(v) }

// EnabledSKUs returns the enabled SKUs in id order (GoodsStock.skus: what
// anonymous callers may see, resolved inline for every subscriber).
func (g *Goods) EnabledSKUs() []*SKU { return g.enabled }
