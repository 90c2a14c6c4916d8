package server

import (
	"encoding/json"

	"storefront/internal/aftersale"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/listing"
	"storefront/internal/promo"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/paging"
	"storefront/internal/webhooks"
	"storefront/skumatrix"
)

// lists gives every list field of the schema the number of items it can
// really return, from the limit that bounds it where that limit is kept.
// A query is charged for that many items, so what the complexity limit
// admits is what the server may have to build. TestEveryListFieldIsBounded
// fails when a list field is added to the schema without an entry here.
//
// args are the field's arguments; page is the page size of the connection
// the field is inside (for edges).
var lists = map[string]func(args map[string]any, page int) int{
	// A goods has at most MaxDimensions specs, and the product of their
	// value counts is at most MaxSKUs, so one spec has at most MaxSKUs
	// values and all of them together at most MaxSKUs + MaxDimensions - 1
	// (one dimension holding them all, the others one each).
	"Goods.specs":      fixed(skumatrix.DefaultLimits.MaxDimensions),
	"Spec.values":      fixed(skumatrix.DefaultLimits.MaxSKUs),
	"Goods.selectable": fixed(skumatrix.DefaultLimits.MaxSKUs + skumatrix.DefaultLimits.MaxDimensions - 1),
	"Sku.specValueIds": fixed(skumatrix.DefaultLimits.MaxDimensions),
	// Enabled SKUs are at most MaxSKUs. Disabled ones (combinations an
	// edit removed) are kept forever so that orders keep pointing at them,
	// so an admin's skus(includeDisabled: true) has no static bound: it is
	// charged like the enabled list and the response-size limit bounds
	// the rest.
	"Goods.skus":   fixed(skumatrix.DefaultLimits.MaxSKUs),
	"Goods.images": fixed(catalog.MaxImages),
	// Live stock (schema.live.graphql): the enabled SKUs, as Goods.skus.
	"GoodsStock.skus":       fixed(skumatrix.DefaultLimits.MaxSKUs),
	"GoodsStock.selectable": fixed(skumatrix.DefaultLimits.MaxSKUs + skumatrix.DefaultLimits.MaxDimensions - 1),
	"SkuStock.specValueIds": fixed(skumatrix.DefaultLimits.MaxDimensions),

	// The category tree: at most MaxChildren under one parent (the roots
	// too) and listing.MaxDepth levels on a path.
	"Query.categories":  fixed(catalog.MaxChildren),
	"Category.children": fixed(catalog.MaxChildren),
	"Category.path":     fixed(listing.MaxDepth),

	"GoodsConnection.edges":      inPage,
	"CouponConnection.edges":     inPage,
	"UserCouponConnection.edges": inPage,
	"Coupon.goodsIds":            fixed(promo.MaxScopeGoods),
	"Goods.coupons":              fixed(promo.MaxGoodsCoupons),
	"OrderConnection.edges":      inPage,
	"StockLogConnection.edges":   inPage,
	"StockPoolConnection.edges":  inPage,
	// Webhooks: createWebhook refuses more than MaxWebhooks; each has at
	// most every event type once (app offers checkout's and after-sales').
	"Query.webhooks":                  fixed(webhooks.MaxWebhooks),
	"Webhook.events":                  fixed(len(checkout.EventTypes) + len(aftersale.EventTypes)),
	"WebhookDeliveryConnection.edges": inPage,
	// Sku.pools answers the SKU's newest pools only.
	"Sku.pools": fixed(inventory.LatestPools),

	// checkout refuses an order of more lines (before merging duplicates).
	"Order.lines": fixed(checkout.DefaultConfig().MaxLines),
	// An order and a cart's cost have at most one adjustment of each kind,
	// and an adjustment a share of each line at most.
	"Order.adjustments":    fixed(len(enums.AdjustmentKind("").Values())),
	"CartCost.adjustments": fixed(len(enums.AdjustmentKind("").Values())),
	"Adjustment.lines":     fixed(checkout.DefaultConfig().MaxLines),
	// A cart holds at most an order's lines; each has at most two warnings
	// (one of stock or availability, and PRICE_CHANGED), and the cart one
	// more of its coupon (COUPON_NOT_APPLICABLE).
	"Cart.lines":    fixed(checkout.DefaultConfig().MaxLines),
	"Cart.warnings": fixed(2*checkout.DefaultConfig().MaxLines + 1),
	// Nothing bounds the payments of one order (each verified provider
	// payment id adds one); an order has one, and a few when money arrived
	// twice. Charged as paymentsPerOrder; the response-size limit bounds
	// the rest.
	"Order.payments": fixed(paymentsPerOrder),
	// An order has one refund, and one more each time a provider refused
	// one and an admin tried again: charged as a few.
	"Order.refunds": fixed(refundsPerOrder),
	// The money log has an entry per payment and per refund of the order.
	"Order.moneyLog": fixed(paymentsPerOrder + refundsPerOrder),

	"Query.stockReconciliation": func(args map[string]any, _ int) int { return reconcileRows(args["limit"]) },

	// Shipping: each bounded where it is written.
	"Query.myAddresses":        fixed(shipping.MaxAddresses),
	"Query.shippingTemplates":  fixed(shipping.MaxTemplates),
	"ShippingTemplate.rules":   fixed(shipping.MaxRules),
	"ShippingRule.regionCodes": fixed(shipping.MaxRuleRegions),
	"Order.shipments":          fixed(checkout.MaxShipments),
	"Shipment.lines":           fixed(checkout.DefaultConfig().MaxLines),

	// After-sales: a request names at most aftersale.MaxLines
	// lines. Nothing bounds an order's after-sales (a rejected or cancelled
	// one gives its units back for the next): charged as a few, the
	// response-size limit bounds the rest.
	"AfterSale.lines":           fixed(aftersale.MaxLines),
	"Order.afterSales":          fixed(afterSalesPerOrder),
	"AfterSaleConnection.edges": inPage,
}

const (
	paymentsPerOrder   = 10
	refundsPerOrder    = 5
	afterSalesPerOrder = 10
)

// connections are the fields whose edges are a page: their first argument
// sizes it as the resolvers do (paging.Size).
var connections = map[string]func(args map[string]any) int{
	"Query.goodsList":         firstArg,
	"Query.myOrders":          firstArg,
	"Query.afterSales":        firstArg,
	"Query.stockLedger":       firstArg,
	"Query.stockPools":        firstArg,
	"Query.webhookDeliveries": firstArg,
	"Query.orders":            firstArg,
	// Charged at their page, not the largest: a Coupon costs its goodsIds'
	// bound (1,000), so the console's page of 20 would pass the limit at 100.
	"Query.coupons":   firstArg,
	"Query.myCoupons": firstArg,
}

// needsArgs says whether a field's cost reads its arguments, so that the
// others skip building the argument map.
func needsArgs(coord string) bool {
	_, conn := connections[coord]
	return conn || coord == "Query.stockReconciliation"
}

func fixed(n int) func(map[string]any, int) int { return func(map[string]any, int) int { return n } }

func inPage(_ map[string]any, page int) int {
	if page == 0 {
		return paging.Max // edges outside a known connection: the largest page
	}
	return page
}

// firstArg is the page size the resolvers give the first argument
// (paging.First, then paging.Size): the default when absent, none for 0,
// at most paging.Max. (A page of 0 is inPage's "unknown", so first: 0
// charges its edges as a full page: too much for no rows, never too little.)
func firstArg(args map[string]any) int {
	var first *int64
	if n, ok := intArg(args["first"]); ok {
		first = &n
	}
	n, err := paging.Size(paging.First(first))
	if err != nil {
		return 0 // refused by the resolver: no rows
	}
	return n
}

// reconcileRows is the number of rows stockReconciliation answers for a
// limit, as resolvers.reconcileLimit clamps it: 100 when absent, at most
// 10 000 (inventory.Reconcile's own cap).
func reconcileRows(limit any) int {
	n, ok := intArg(limit)
	switch {
	case !ok || n <= 0:
		return 100
	case n > 10_000:
		return 10_000
	}
	return int(n)
}

// intArg reads an Int argument: int64 from a literal, and whatever the
// variables' decoding produced from a variable.
func intArg(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	}
	return 0, false
}
