package main

import (
	"errors"
	"flag"

	"storefront/internal/server"
)

// responseCacheFlags registers serve's response cache: finished answers of
// anonymous product-page and listing queries, validated against the
// product-view cache (docs/operations.md, "The response cache").
func responseCacheFlags(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.ResponseCache, "response-cache", envBool("RESPONSE_CACHE", true),
		"serve anonymous cacheable queries from finished answers; false: execute every request (STOREFRONT_RESPONSE_CACHE)")
	fs.Int64Var(&c.ResponseCacheMaxCost, "response-cache-max-cost", envInt("RESPONSE_CACHE_MAX_COST", server.DefaultResponseCacheMaxCost),
		"response cache memory bound in bytes (STOREFRONT_RESPONSE_CACHE_MAX_COST)")
}

func validResponseCache(c *config) error {
	if c.ResponseCacheMaxCost < 1 {
		return errors.New("--response-cache-max-cost must be at least 1")
	}
	return nil
}
