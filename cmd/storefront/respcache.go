package main

import "errors"

// responseCacheFlags are serve's response cache: finished answers of
// anonymous product-page and listing queries, validated against the
// product-view cache (docs/operations.md, "The response cache").
type responseCacheFlags struct {
	On      bool  `name:"response-cache" env:"STOREFRONT_RESPONSE_CACHE" default:"true" help:"serve anonymous cacheable queries from finished answers; false: execute every request"`
	MaxCost int64 `name:"response-cache-max-cost" env:"STOREFRONT_RESPONSE_CACHE_MAX_COST" default:"${response_cache_max_cost}" help:"response cache memory bound in bytes"`
}

func (r *responseCacheFlags) Validate() error {
	if r.MaxCost < 1 {
		return errors.New("--response-cache-max-cost must be at least 1")
	}
	return nil
}

// bytes is the cache's bound when it is on, else 0.
func (r *responseCacheFlags) bytes() int64 {
	if !r.On {
		return 0
	}
	return r.MaxCost
}
