package main

import (
	"math"
	"os"
	"runtime/debug"

	"storefront/internal/platform/gctune"
)

// memoryLimit is the limit serve applies: --memory-limit, or the default
// derived from the caches' bounds.
func (c *serveCmd) memoryLimit() int64 {
	if c.Runtime.MemoryLimit > 0 {
		return c.Runtime.MemoryLimit
	}
	return gctune.DefaultMemoryLimit(c.Catalog.CacheMaxCost + 2*c.GraphQL.QueryCacheBytes + c.GraphQL.Cache.bytes())
}

// memoryLimitInForce is the limit the runtime will keep once serve applies
// limit: GOMEMLIMIT's when set (the runtime applied it at start), else limit.
// With GOMEMLIMIT=off there is none, and limit stands for what the process
// was sized for.
func memoryLimitInForce(limit int64) int64 {
	if _, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			return l
		}
	}
	return limit
}
