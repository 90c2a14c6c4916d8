package server

import (
	"github.com/vektah/gqlparser/v2/ast"
)

// cacheableFields are the fields whose answer to an anonymous caller
// depends on nothing but the product views and listings the catalog hands
// out (catalog.ReadSet records those reads), the query and its variables.
// An operation is served from the response cache only if every field it
// selects is listed here. Everything else bypasses the cache: orders, carts,
// payments, the ledger, reconciliation, admin-only data (Sku.costPrice) and
// introspection. TestCacheableFieldsAreClassified fails when a field is
// added to one of these types without a decision here or in
// privateFields.
var cacheableFields = map[string]map[string]bool{
	"Query":           set("goods", "goodsList"),
	"Goods":           set("id", "name", "code", "status", "specType", "stockMode", "version", "description", "images", "slug", "createdAt", "specs", "skus", "priceRange", "totalStock", "skuBySelection", "selectable", "purchaseLimit", "shippingTemplateId"),
	"Image":           set("url", "alt"),
	"Spec":            set("id", "name", "values"),
	"SpecValue":       set("id", "name"),
	"Sku":             set("id", "goodsId", "specValueIds", "specValueStr", "specKey", "skuCode", "sellPrice", "lineationPrice", "stock", "lockedStock", "availableStock", "version", "stockVersion", "volume", "status", "weightGrams"),
	"PriceRange":      set("min", "max"),
	"SelectableValue": set("specValueId", "selectable"),
	"GoodsConnection": set("edges", "pageInfo", "totalCount"),
	"GoodsEdge":       set("cursor", "node"),
	"PageInfo":        set("hasNextPage", "hasPreviousPage", "startCursor", "endCursor"),
}

// privateFields are fields of the types above that must never make an
// operation cacheable: their answer depends on who asks (costPrice, the
// admin's pools), or on rows the catalog's views do not carry, so no edit
// would invalidate it (activePool reads the stock_pool row, whose stock
// moves with every flash-sale order and whose window opens by the clock).
//
// Goods.category (and the category queries, which are not listed at all)
// read the category tree, which no goods edit invalidates: a renamed
// category must show at once, so they are executed every time.
var privateFields = map[string]map[string]bool{
	"Sku":   set("costPrice", "pools", "activePool"),
	"Goods": set("category", "coupons"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// cacheableOp says whether op may be answered from the response cache: a
// query (never a mutation or subscription) all of whose fields, through
// fragments and inline fragments, are in cacheableFields. __typename is
// allowed anywhere; __schema and __type are not (introspection can be
// switched per instance, and nobody needs it cached).
func cacheableOp(op *ast.OperationDefinition, frags ast.FragmentDefinitionList) bool {
	if op == nil || op.Operation != ast.Query {
		return false
	}
	seen := map[string]bool{}
	var walk func(ast.SelectionSet) bool
	walk = func(s ast.SelectionSet) bool {
		for _, sel := range s {
			switch f := sel.(type) {
			case *ast.Field:
				if f.Name == "__typename" {
					continue
				}
				if f.ObjectDefinition == nil || !cacheableFields[f.ObjectDefinition.Name][f.Name] {
					return false
				}
				if !walk(f.SelectionSet) {
					return false
				}
			case *ast.InlineFragment:
				if !walk(f.SelectionSet) {
					return false
				}
			case *ast.FragmentSpread:
				if seen[f.Name] {
					continue
				}
				seen[f.Name] = true
				def := frags.ForName(f.Name)
				if def == nil || !walk(def.SelectionSet) {
					return false
				}
			default:
				return false
			}
		}
		return true
	}
	return walk(op.SelectionSet)
}
