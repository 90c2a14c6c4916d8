package catalog

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/ent/spec"
	"storefront/ent/specvalue"
	"storefront/store"
)

// loadViews builds product views for many goods with a fixed number of
// queries (goods, specs, values, SKUs) whatever the number of goods: no N+1.
// The result follows the order of rows; missing ids are simply absent.
func loadViews(ctx context.Context, c *ent.Client, rows []*ent.Goods) ([]*Goods, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	specs, err := c.Spec.Query().
		Where(spec.GoodsIDIn(ids...), spec.Disabled(false)).
		Order(spec.BySort(), spec.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("loading specs: %w", err))
	}
	values, err := c.SpecValue.Query().
		Where(specvalue.GoodsIDIn(ids...), specvalue.Disabled(false)).
		Order(specvalue.BySort(), specvalue.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("loading spec values: %w", err))
	}
	skus, err := c.Sku.Query().Where(sku.GoodsIDIn(ids...)).Order(sku.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("loading SKUs: %w", err))
	}

	valuesBySpec := map[int64][]*SpecValue{}
	for _, v := range values {
		valuesBySpec[v.SpecID] = append(valuesBySpec[v.SpecID], &SpecValue{ID: v.ID, Name: v.Name})
	}
	specsByGoods := map[int64][]*Spec{}
	for _, s := range specs {
		// A dimension whose values were all removed cannot be selected from.
		if len(valuesBySpec[s.ID]) == 0 {
			continue
		}
		specsByGoods[s.GoodsID] = append(specsByGoods[s.GoodsID], &Spec{ID: s.ID, Name: s.Name, Values: valuesBySpec[s.ID]})
	}
	skusByGoods := map[int64][]*SKU{}
	for _, s := range skus {
		v, err := skuView(s)
		if err != nil {
			return nil, err
		}
		skusByGoods[s.GoodsID] = append(skusByGoods[s.GoodsID], v)
	}
	out := make([]*Goods, 0, len(rows))
	for _, r := range rows {
		g, err := newGoods(Goods{
			ID: r.ID, Name: r.Name, Code: r.Code, Status: r.Status, SpecType: r.SpecType,
			Version: r.Version, Specs: specsByGoods[r.ID],
		}, skusByGoods[r.ID])
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

func skuView(s *ent.Sku) (*SKU, error) {
	ids, err := parseIDList(s.SpecValueIds)
	if err != nil {
		return nil, fmt.Errorf("SKU %d: spec_value_ids %q: %w", s.ID, s.SpecValueIds, err)
	}
	return &SKU{
		ID: s.ID, GoodsID: s.GoodsID, SpecValueIDs: ids, SpecValueStr: s.SpecValueStr, SpecKey: s.SpecKey,
		SkuCode: s.SkuCode, SellPrice: s.SellPrice, LineationPrice: s.LineationPrice, Cost: s.CostPrice,
		Stock: s.Stock, Version: s.Version, Volume: s.Volume, Status: s.Status,
	}, nil
}

// formatIDList renders display-order ids as the seed's comma list.
func formatIDList(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.FormatInt(id, 10)
	}
	return strings.Join(parts, ",")
}

func parseIDList(s string) ([]int64, error) {
	if s == "" {
		return []int64{}, nil
	}
	parts := strings.Split(s, ",")
	ids := make([]int64, len(parts))
	for i, p := range parts {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}
