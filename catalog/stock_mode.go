package catalog

import (
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/enums"
	"storefront/errs"
	"storefront/store"
)

// SetStockMode switches when the goods' orders take stock. Orders placed
// before keep the mode their lines recorded (checkout), so a switch never
// changes what an open order holds: it is a catalog edit like any other
// (the goods' version moves, views reload).
func (s *Service) SetStockMode(ctx context.Context, goodsID int64, mode enums.StockMode) (*Goods, error) {
	if !slices.Contains(mode.Values(), string(mode)) {
		return nil, fmt.Errorf("%w: stock mode %q", errs.InvalidInput, mode)
	}
	err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		return bumpGoods(ctx, tx, goodsID, nil, func(u *ent.GoodsUpdate) { u.SetStockMode(mode) })
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	s.changed(goodsID)
	return s.Goods(ctx, Viewer{Admin: true}, goodsID)
}
