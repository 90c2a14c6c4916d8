package cart

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/predicate"
	"storefront/ent/sku"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/skumatrix"
)

// LineInput names a SKU as placeOrder's items do (ItemID, or GoodsID +
// SpecValueIDs in any order) with a quantity to add.
type LineInput struct {
	ItemID       *int64
	GoodsID      *int64
	SpecValueIDs []int64
	Quantity     int64
}

// LineUpdate sets a line's quantity; 0 removes the line.
type LineUpdate struct {
	LineID   int64
	Quantity int64
}

// maxLines is the most lines a cart holds, and so the most one request may
// name: checkout's lines per order, so that every cart fits one order.
func (s *Service) maxLines() int { return s.checkout.Config().MaxLines }

// maxQuantity is the most units of one line: checkout's per SKU per order.
func (s *Service) maxQuantity() int64 { return s.checkout.Config().MaxQuantity }

func (s *Service) checkCount(n int, what string) error {
	if n > s.maxLines() {
		return fmt.Errorf("%w: %d %s, at most %d", errs.InvalidInput, n, what, s.maxLines())
	}
	return nil
}

func (s *Service) checkQuantity(i int, q, least int64) error {
	if q < least || q > s.maxQuantity() {
		return fmt.Errorf("%w: line %d: quantity %d, want %d to %d", checkout.ErrInvalidQuantity, i+1, q, least, s.maxQuantity())
	}
	return nil
}

// checkLines validates the shape of lines without touching the database.
func (s *Service) checkLines(lines []LineInput) error {
	if err := s.checkCount(len(lines), "lines"); err != nil {
		return err
	}
	for i, l := range lines {
		switch {
		case l.ItemID != nil && (l.GoodsID != nil || l.SpecValueIDs != nil):
			return fmt.Errorf("%w: line %d: give itemId, or goodsId with specValueIds, not both", errs.InvalidInput, i+1)
		case l.ItemID == nil && l.GoodsID == nil:
			return fmt.Errorf("%w: line %d: give itemId, or goodsId with specValueIds", errs.InvalidInput, i+1)
		}
		if err := s.checkQuantity(i, l.Quantity, 1); err != nil {
			return err
		}
	}
	return nil
}

// skus finds the SKU each line names (in the order given), in one query:
// NOT_FOUND for one that does not exist, SKU_UNAVAILABLE for one not on
// sale now (a SKU that goes off sale later stays in the cart with a warning).
func (s *Service) skus(ctx context.Context, lines []LineInput) ([]*ent.Sku, error) {
	named := make([]predicate.Sku, len(lines))
	for i, l := range lines {
		if l.ItemID != nil {
			named[i] = sku.ID(*l.ItemID)
		} else {
			named[i] = sku.And(sku.GoodsID(*l.GoodsID), sku.SpecKey(skumatrix.SpecKey(l.SpecValueIDs)))
		}
	}
	rows, err := s.db.Client.Sku.Query().Where(sku.Or(named...)).WithGoods().All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("finding SKUs: %w", err))
	}
	out := make([]*ent.Sku, len(lines))
	for i, l := range lines {
		for _, r := range rows {
			if l.ItemID != nil && r.ID == *l.ItemID || l.ItemID == nil && r.GoodsID == *l.GoodsID && r.SpecKey == skumatrix.SpecKey(l.SpecValueIDs) {
				out[i] = r
			}
		}
		r := out[i]
		if r == nil {
			return nil, fmt.Errorf("%w: line %d: no such SKU", errs.NotFound, i+1)
		}
		if !onSale(r) {
			return nil, fmt.Errorf("%w: SKU %d (%s %s) is not on sale", checkout.ErrSkuUnavailable, r.ID, r.Edges.Goods.Name, r.SpecValueStr)
		}
	}
	return out, nil
}

// onSale says whether r (read with its goods) may be ordered now.
func onSale(r *ent.Sku) bool {
	return r.Status == enums.SkuEnabled && r.Edges.Goods.Status == enums.GoodsOnShelf
}

// current reads the SKUs ids with their goods, as they are now.
func current(ctx context.Context, c *ent.Client, ids []int64) (map[int64]*ent.Sku, error) {
	rows, err := c.Sku.Query().Where(sku.IDIn(ids...)).WithGoods(func(q *ent.GoodsQuery) {
		q.Select(goods.FieldID, goods.FieldName, goods.FieldStatus)
	}).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the cart's SKUs: %w", err))
	}
	m := make(map[int64]*ent.Sku, len(rows))
	for _, r := range rows {
		m[r.ID] = r
	}
	return m, nil
}
