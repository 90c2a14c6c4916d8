package catalog

import "storefront/ent"

// SKUOf is the GraphQL view of a SKU row another domain package changed
// (inventory's stock mutations answer with the SKU).
func SKUOf(row *ent.Sku) (*SKU, error) { return skuView(row) }
