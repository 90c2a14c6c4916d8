package catalog

import (
	"context"
	"time"

	"storefront/ent"

	"storefront/internal/platform/settings"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// Config bounds what an admin can create and sizes the product-view cache.
type Config struct {
	Limits   skumatrix.Limits
	MaxPrice money.Money
	// StockTTL is how long a cached view's stock is shown before one query
	// re-checks it: stock on product pages lags by at most this much (seed
	// 003, 7.3). Edits through this instance are visible at once.
	StockTTL time.Duration
	// CacheMaxCost bounds the cache's memory, in bytes.
	CacheMaxCost int64
	// OnPurchaseLimit counts, in the edit's transaction and under the
	// goods' exclusive lock, what customers already hold of a goods whose
	// purchase limit an edit sets (app.New: checkout.CountHeld, the writer
	// of order lines); nil counts nothing.
	OnPurchaseLimit func(ctx context.Context, tx *ent.Tx, goods int64) error
}

// Cache defaults: a short stock TTL, and a memory bound that holds thousands
// of typical goods.
const (
	DefaultStockTTL     = 2 * time.Second
	DefaultCacheMaxCost = 64 << 20
)

// DefaultConfig follows the seed: ≤ 6 dimensions, ≤ 500 SKUs per goods.
func DefaultConfig() Config {
	return Config{
		Limits: skumatrix.DefaultLimits, MaxPrice: money.MustParse("1000000.00"),
		StockTTL: DefaultStockTTL, CacheMaxCost: DefaultCacheMaxCost,
	}
}

// withDefaults fills the cache settings a hand-built Config left at zero.
func (c Config) withDefaults() Config {
	settings.Positive(&c.StockTTL, DefaultStockTTL)
	settings.Positive(&c.CacheMaxCost, DefaultCacheMaxCost)
	return c
}
