package checkout

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/predicate"
	"storefront/ent/sku"
	"storefront/enums"
	"storefront/money"
	"storefront/skumatrix"
	"storefront/store"
)

// line is one SKU of an order being placed, with its price read from the
// database.
type line struct {
	OrderLine
	SpecKey string
}

// resolve turns the items into lines: each SKU found (by id or by spec key),
// on shelf and enabled, duplicates merged, sorted by ascending SKU id (the
// lock order every stock-moving transaction follows, so none can deadlock on
// another's SKU rows). Reads only; nothing is written.
func (s *Service) resolve(ctx context.Context, items []ItemInput) ([]*line, money.Money, error) {
	var ids []int64
	var bySpec []predicate.Sku
	for _, it := range items {
		if it.ItemID != nil {
			ids = append(ids, *it.ItemID)
		} else {
			bySpec = append(bySpec, sku.And(sku.GoodsID(*it.GoodsID), sku.SpecKey(skumatrix.SpecKey(it.SpecValueIDs))))
		}
	}
	var where []predicate.Sku
	if len(ids) > 0 {
		where = append(where, sku.IDIn(ids...))
	}
	where = append(where, bySpec...)
	rows, err := s.db.Client.Sku.Query().Where(sku.Or(where...)).
		WithGoods(func(q *ent.GoodsQuery) {
			q.Select(goods.FieldID, goods.FieldName, goods.FieldStatus, goods.FieldDeleteTime)
		}).
		All(ctx)
	if err != nil {
		return nil, 0, store.Classify(fmt.Errorf("loading SKUs: %w", err))
	}
	byID := make(map[int64]*ent.Sku, len(rows))
	byKey := make(map[string]*ent.Sku, len(rows))
	for _, r := range rows {
		byID[r.ID] = r
		byKey[fmt.Sprint(r.GoodsID, "/", r.SpecKey)] = r
	}
	merged := map[int64]*line{}
	for i, it := range items {
		var r *ent.Sku
		if it.ItemID != nil {
			r = byID[*it.ItemID]
			if r == nil {
				return nil, 0, fmt.Errorf("%w: item %d: no SKU %d", ErrNotFound, i+1, *it.ItemID)
			}
		} else {
			r = byKey[fmt.Sprint(*it.GoodsID, "/", skumatrix.SpecKey(it.SpecValueIDs))]
			if r == nil {
				return nil, 0, fmt.Errorf("%w: item %d: goods %d has no SKU with spec values %v", ErrNotFound, i+1, *it.GoodsID, it.SpecValueIDs)
			}
		}
		g := r.Edges.Goods
		if g == nil || g.DeleteTime != nil {
			return nil, 0, fmt.Errorf("%w: item %d: no SKU %d", ErrNotFound, i+1, r.ID)
		}
		if g.Status != enums.GoodsOnShelf || r.Status != enums.SkuEnabled {
			return nil, 0, fmt.Errorf("%w: SKU %d (%s %s) is not on sale", ErrSkuUnavailable, r.ID, g.Name, r.SpecValueStr)
		}
		l := merged[r.ID]
		if l == nil {
			l = &line{OrderLine: OrderLine{ItemID: r.ID, GoodsID: r.GoodsID, GoodsName: g.Name, SpecValueStr: r.SpecValueStr, UnitPrice: r.SellPrice}, SpecKey: r.SpecKey}
			merged[r.ID] = l
		}
		l.Quantity += it.Quantity
		if l.Quantity > s.cfg.MaxQuantity {
			return nil, 0, fmt.Errorf("%w: SKU %d: %d in total, at most %d", ErrInvalidQuantity, r.ID, l.Quantity, s.cfg.MaxQuantity)
		}
	}
	lines := make([]*line, 0, len(merged))
	var amount money.Money
	for _, l := range merged {
		lines = append(lines, l)
		amount += l.UnitPrice * money.Money(l.Quantity)
	}
	slices.SortFunc(lines, func(a, b *line) int { return cmp.Compare(a.ItemID, b.ItemID) })
	return lines, amount, nil
}
