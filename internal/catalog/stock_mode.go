package catalog

import (
	"context"
	"fmt"
	"slices"

	"storefront/ent"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// SetStockMode switches when the goods' orders take stock. Orders placed
// before keep the mode their lines recorded (checkout), so a switch never
// changes what an open order holds: it is a catalog edit like any other
// (the goods' version moves, views reload).
func (s *Service) SetStockMode(ctx context.Context, goodsID int64, mode enums.StockMode) (*Goods, error) {
	if !slices.Contains(mode.Values(), string(mode)) {
		return nil, fmt.Errorf("%w: stock mode %q", errs.InvalidInput, mode)
	}
	return s.setGoods(ctx, goodsID, func(u *ent.GoodsUpdate) { u.SetStockMode(mode) })
}
