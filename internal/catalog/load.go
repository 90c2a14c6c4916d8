package catalog

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/ent/sku"
	"storefront/ent/spec"
	"storefront/ent/specvalue"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/media"
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
			ID: r.ID, Name: r.Name, Code: r.Code, Status: r.Status, SpecType: r.SpecType, StockMode: r.StockMode,
			Version: r.Version, Specs: specsByGoods[r.ID],
			Description: r.Description, Images: r.Images, Slug: valueOr(r.Slug, ""), CategoryID: r.CategoryID, CreatedAt: r.CreatedAt,
			PurchaseLimit:      r.PurchaseLimit,
			ShippingTemplateID: r.ShippingTemplateID,
		}, skusByGoods[r.ID])
		if err != nil {
			return nil, err
		}
		if g.Images == nil {
			g.Images = []media.Image{}
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
		Stock: s.Stock, LockedStock: s.LockStock, Version: s.Version, StockVersion: s.StockVersion, Volume: s.Volume, Status: s.Status,
		WeightGrams: s.WeightGrams,
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

// freshness is what a cached view is checked against once its stock TTL has
// passed: one indexed query instead of the four of a full load.
type freshness struct {
	version    int64
	status     enums.GoodsStatus
	skuIDs     []int64
	skuStatus  []enums.SkuStatus
	skuVersion []int64 // the terms' versions
	skuLive
}

// loadFreshness reads the goods' version and status and every SKU's
// id, status, stock, lock, both versions and volume in one query; nil when the goods does
// not exist.
func loadFreshness(ctx context.Context, c *ent.Client, id int64) (*freshness, error) {
	var rows []struct {
		Version   int64          `sql:"version"`
		Status    string         `sql:"status"`
		SkuID     sql.NullInt64  `sql:"sku_id"`
		Stock     sql.NullInt64  `sql:"stock"`
		Locked    sql.NullInt64  `sql:"lock_stock"`
		SkuStatus sql.NullString `sql:"sku_status"`
		SkuVer    sql.NullInt64  `sql:"sku_version"`
		StockVer  sql.NullInt64  `sql:"stock_version"`
		Volume    sql.NullInt64  `sql:"volume"`
	}
	err := c.Goods.Query().Where(goods.ID(id)).Modify(func(s *entsql.Selector) {
		t := entsql.Table(sku.Table)
		s.LeftJoin(t).On(s.C(goods.FieldID), t.C(sku.FieldGoodsID))
		s.Select(
			s.C(goods.FieldVersion), s.C(goods.FieldStatus),
			entsql.As(t.C(sku.FieldID), "sku_id"), entsql.As(t.C(sku.FieldStock), "stock"),
			entsql.As(t.C(sku.FieldLockStock), "lock_stock"),
			entsql.As(t.C(sku.FieldStatus), "sku_status"), entsql.As(t.C(sku.FieldVersion), "sku_version"),
			entsql.As(t.C(sku.FieldStockVersion), "stock_version"),
			entsql.As(t.C(sku.FieldVolume), "volume"),
		)
		s.OrderBy(t.C(sku.FieldID))
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("checking goods %d: %w", id, err))
	}
	if len(rows) == 0 {
		return nil, nil
	}
	f := &freshness{version: rows[0].Version, status: enums.GoodsStatus(rows[0].Status)}
	for _, r := range rows {
		if !r.SkuID.Valid {
			continue // LEFT JOIN: a goods without SKUs
		}
		f.skuIDs = append(f.skuIDs, r.SkuID.Int64)
		f.skuStatus = append(f.skuStatus, enums.SkuStatus(r.SkuStatus.String))
		f.stock = append(f.stock, r.Stock.Int64)
		f.locked = append(f.locked, r.Locked.Int64)
		f.skuVersion = append(f.skuVersion, r.SkuVer.Int64)
		f.stockVersion = append(f.stockVersion, r.StockVer.Int64)
		f.volume = append(f.volume, r.Volume.Int64)
	}
	return f, nil
}

// sameCatalog reports whether f describes the catalog part of g (only stock
// may differ), so a stock refresh can reuse g's index and spec-key map.
func (f *freshness) sameCatalog(g *Goods) bool {
	c := g.cat
	if f.version != g.Version || f.status != g.Status || len(f.skuIDs) != len(c.tmpl) {
		return false
	}
	for i := range c.tmpl {
		if f.skuIDs[i] != c.tmpl[i].ID || f.skuStatus[i] != c.tmpl[i].Status || f.skuVersion[i] != c.tmpl[i].Version {
			return false
		}
	}
	return true
}

// sameStock reports whether g already shows f's stock, stock versions and volumes.
func (f *freshness) sameStock(g *Goods) bool {
	for i, s := range g.skus {
		if f.stock[i] != s.Stock || f.locked[i] != s.LockedStock || f.stockVersion[i] != s.StockVersion || f.volume[i] != s.Volume {
			return false
		}
	}
	return true
}
