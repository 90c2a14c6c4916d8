package main

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"storefront/internal/cart"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
)

// cartFlags registers the cart settings shared by serve and close-expired.
func cartFlags(fs *flag.FlagSet, c *config) {
	fs.DurationVar(&c.CartTTL, "cart-ttl", envDuration("CART_TTL", cart.DefaultConfig().TTL), "carts untouched for this long expire and are purged (STOREFRONT_CART_TTL)")
}

func validCart(c *config) error {
	if c.CartTTL <= 0 {
		return errors.New("--cart-ttl must be positive")
	}
	return nil
}

// purgeCarts is close-expired's cart pass: serve's closer runs the same.
func purgeCarts(ctx context.Context, db *store.DB, orders *checkout.Service, c *config) error {
	n, err := cart.New(db, orders, cart.Config{TTL: c.CartTTL}).Purge(ctx)
	if err != nil {
		return fmt.Errorf("purged %d expired carts, then: %w", n, err)
	}
	fmt.Printf("purged %d expired carts\n", n)
	return nil
}
