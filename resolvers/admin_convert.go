package resolvers

import (
	"storefront/graph"
	"storefront/internal/catalog"
	"storefront/internal/inventory"
	"storefront/internal/vocab/enums"
)

func createInput(in graph.CreateGoodsInput) (catalog.CreateInput, error) {
	var p ids
	out := catalog.CreateInput{Name: in.Name, Code: deref(in.Code), Status: enums.GoodsOffShelf,
		Content: content(in.Description, in.Images, in.Slug), CategoryID: p.opt(in.CategoryID), PurchaseLimit: in.PurchaseLimit,
		ShippingTemplateID: p.opt(in.ShippingTemplateID)}
	if in.Status != nil {
		out.Status = *in.Status
	}
	if in.StockMode != nil { // null: the default, as when left out
		out.StockMode = *in.StockMode
	}
	for _, sp := range in.Specs {
		out.Specs = append(out.Specs, catalog.SpecInput{Name: sp.Name, Values: sp.Values})
	}
	if in.DefaultSku != nil {
		out.DefaultSku = skuTerms(in.DefaultSku)
	}
	for _, o := range in.Skus {
		out.Skus = append(out.Skus, catalog.SkuOverride{
			Values: o.Values, SkuCode: o.SkuCode, Enabled: o.Enabled,
			SkuTerms: catalog.SkuTerms{SellPrice: o.SellPrice, LineationPrice: deref(o.LineationPrice),
				CostPrice: deref(o.CostPrice), Stock: deref(o.Stock), WeightGrams: deref(o.WeightGrams)},
		})
	}
	return out, p.err
}

func skuTerms(t *graph.SkuTermsInput) catalog.SkuTerms {
	return catalog.SkuTerms{SellPrice: t.SellPrice, LineationPrice: deref(t.LineationPrice),
		CostPrice: deref(t.CostPrice), Stock: deref(t.Stock), WeightGrams: deref(t.WeightGrams)}
}

func updateSpecsInput(in graph.UpdateGoodsSpecsInput) (catalog.UpdateSpecsInput, error) {
	var p ids
	out := catalog.UpdateSpecsInput{GoodsID: p.one(in.GoodsID), ExpectedVersion: in.ExpectedVersion}
	for _, sp := range in.Specs {
		e := catalog.SpecEdit{ID: p.opt(sp.ID), Name: sp.Name}
		for _, v := range sp.Values {
			e.Values = append(e.Values, catalog.ValueEdit{ID: p.opt(v.ID), Name: v.Name})
		}
		out.Specs = append(out.Specs, e)
	}
	if in.DefaultSku != nil {
		t := skuTerms(in.DefaultSku)
		out.DefaultSku = &t
	}
	for _, o := range in.Skus {
		out.Skus = append(out.Skus, catalog.SkuEdit{
			Values: o.Values, SellPrice: o.SellPrice, LineationPrice: o.LineationPrice, CostPrice: o.CostPrice,
			Stock: o.Stock, SkuCode: o.SkuCode, Enabled: o.Enabled, WeightGrams: o.WeightGrams,
		})
	}
	return out, p.err
}

func updateSkuInput(in graph.UpdateSkuInput) (catalog.UpdateSkuInput, error) {
	var p ids
	return catalog.UpdateSkuInput{ItemID: p.one(in.ItemID), ExpectedVersion: in.ExpectedVersion, SellPrice: in.SellPrice,
		LineationPrice: in.LineationPrice, CostPrice: in.CostPrice, SkuCode: in.SkuCode, Status: in.Status, WeightGrams: in.WeightGrams}, p.err
}

func ledgerConnection(p *inventory.LedgerPage) *graph.StockLogConnection {
	edges, info := connection(p.Rows, p.HasNextPage, func(r *inventory.LedgerRow) string { return inventory.Cursor(r.ID) },
		func(cursor string, r *inventory.LedgerRow) *graph.StockLogEdge {
			return &graph.StockLogEdge{Cursor: cursor, Node: r}
		})
	return &graph.StockLogConnection{Edges: edges, PageInfo: info}
}

func poolInput(in graph.CreateStockPoolInput) (inventory.PoolInput, error) {
	limit := int64(1) // the schema's default, also when sent as null
	if in.PerBuyerLimit != nil {
		limit = *in.PerBuyerLimit
	}
	var p ids
	return inventory.PoolInput{ItemID: p.one(in.ItemID), Name: in.Name, Price: in.Price, Quantity: in.Quantity,
		PerBuyerLimit: limit, StartsAt: in.StartsAt, EndsAt: in.EndsAt}, p.err
}

func poolConnection(p *inventory.PoolPage) *graph.StockPoolConnection {
	edges, info := connection(p.Pools, p.HasNextPage, func(x *inventory.Pool) string { return inventory.PoolCursor(x.ID) },
		func(cursor string, x *inventory.Pool) *graph.StockPoolEdge {
			return &graph.StockPoolEdge{Cursor: cursor, Node: x}
		})
	return &graph.StockPoolConnection{Edges: edges, PageInfo: info}
}
