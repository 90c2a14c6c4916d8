package main

import (
	"errors"
	"flag"
	"math"
	"os"
	"runtime/debug"

	"storefront/internal/platform/gctune"
)

// memoryLimitFlag registers serve's soft memory limit (internal/gctune).
func memoryLimitFlag(fs *flag.FlagSet, c *config) {
	fs.Int64Var(&c.MemoryLimit, "memory-limit", envInt("MEMORY_LIMIT", 0),
		"the Go runtime's soft memory limit in bytes; 0: the caches' bounds (--cache-max-cost, --response-cache-max-cost, twice --query-cache-bytes) plus 48 MiB; GOMEMLIMIT, when set, wins (STOREFRONT_MEMORY_LIMIT)")
}

// memoryLimit is the limit serve applies: the flag's, or the default
// derived from the caches' bounds.
func memoryLimit(c *config) (int64, error) {
	if c.MemoryLimit < 0 {
		return 0, errors.New("--memory-limit must be 0 (derived from the caches) or more")
	}
	if c.MemoryLimit > 0 {
		return c.MemoryLimit, nil
	}
	caches := c.Catalog.CacheMaxCost + 2*c.QueryCacheBytes
	if c.ResponseCache {
		caches += c.ResponseCacheMaxCost
	}
	return gctune.DefaultMemoryLimit(caches), nil
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
