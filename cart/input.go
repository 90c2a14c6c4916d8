package cart

import (
	"context"
	"fmt"

	"storefront/checkout"
	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/sku"
	"storefront/enums"
	"storefront/errs"
	"storefront/skumatrix"
	"storefront/store"
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

// skus finds the SKU each line names (in the order given): NOT_FOUND for
// one that does not exist, SKU_UNAVAILABLE for one not on sale now (a SKU
// that goes off sale later stays in the cart with a warning).
func (s *Service) skus(ctx context.Context, lines []LineInput) ([]*ent.Sku, error) {
	out := make([]*ent.Sku, len(lines))
	for i, l := range lines {
		q := s.db.Client.Sku.Query().WithGoods()
		if l.ItemID != nil {
			q = q.Where(sku.ID(*l.ItemID))
		} else {
			q = q.Where(sku.GoodsID(*l.GoodsID), sku.SpecKey(skumatrix.SpecKey(l.SpecValueIDs)))
		}
		r, err := q.Only(ctx)
		if ent.IsNotFound(err) || err == nil && r.Edges.Goods.DeleteTime != nil {
			return nil, fmt.Errorf("%w: line %d: no such SKU", errs.NotFound, i+1)
		}
		if err != nil {
			return nil, store.Classify(fmt.Errorf("finding SKU: %w", err))
		}
		if r.Status != enums.SkuEnabled || r.Edges.Goods.Status != enums.GoodsOnShelf {
			return nil, fmt.Errorf("%w: SKU %d (%s %s) is not on sale", checkout.ErrSkuUnavailable, r.ID, r.Edges.Goods.Name, r.SpecValueStr)
		}
		out[i] = r
	}
	return out, nil
}

// current reads the SKUs ids with their goods, as they are now.
func current(ctx context.Context, c *ent.Client, ids []int64) (map[int64]*ent.Sku, error) {
	rows, err := c.Sku.Query().Where(sku.IDIn(ids...)).WithGoods(func(q *ent.GoodsQuery) {
		q.Select(goods.FieldID, goods.FieldName, goods.FieldStatus, goods.FieldDeleteTime)
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
