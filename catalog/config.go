package catalog

import (
	"storefront/money"
	"storefront/skumatrix"
)

// Config bounds what an admin can create.
type Config struct {
	Limits   skumatrix.Limits
	MaxPrice money.Money
	MaxStock int64
}

// DefaultConfig follows the seed: ≤ 6 dimensions, ≤ 500 SKUs per goods.
func DefaultConfig() Config {
	return Config{Limits: skumatrix.DefaultLimits, MaxPrice: money.MustParse("1000000.00"), MaxStock: 100_000_000}
}
