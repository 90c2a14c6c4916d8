// Package resolvers is the GraphQL layer's only wiring point: thin resolver
// bodies that convert input, call one domain function and convert output.
package resolvers

import (
	"storefront/internal/aftersale"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/checkout"
	"storefront/internal/inventory"
	"storefront/internal/live"
	"storefront/internal/payments"
	"storefront/internal/promo"
	"storefront/internal/shipping"
	"storefront/internal/webhooks"
)

// Resolver holds the domain services (dependency injection root; gqlgen does
// not regenerate this file).
type Resolver struct {
	Catalog   *catalog.Service
	Inventory *inventory.Service
	Checkout  *checkout.Service
	Payments  *payments.Service
	Carts     *cart.Service
	// Live serves the goodsStock subscription (nil: subscriptions answer
	// UNAVAILABLE; the server then mounts no WebSocket transport either).
	Live  *live.Hub
	Hooks *webhooks.Service // Hooks: queryResolver has a method Webhooks
	Promo *promo.Service
	// Ship keeps address books and freight templates (Shipping is
	// CartCost's resolver method).
	Ship *shipping.Service
	// AfterSales runs buyers' refund and return requests.
	AfterSales *aftersale.Service
}
