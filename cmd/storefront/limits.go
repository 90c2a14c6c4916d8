package main

import (
	"errors"
	"flag"

	"storefront/internal/server"
)

// limitFlags registers serve's GraphQL limits beyond depth and complexity
// (opsFlags): aliases, the size of an answer, the query caches' memory and
// the size of a persisted query. docs/operations.md says why each default.
func limitFlags(fs *flag.FlagSet, c *config) {
	fs.IntVar(&c.MaxAliases, "max-query-aliases", int(envInt("MAX_QUERY_ALIASES", server.DefaultMaxAliases)),
		"most aliased fields in one GraphQL operation, counted where fragments are spread (STOREFRONT_MAX_QUERY_ALIASES)")
	fs.Int64Var(&c.MaxResponseBytes, "max-response-bytes", envInt("MAX_RESPONSE_BYTES", server.DefaultMaxResponseBytes),
		"a query whose answer grows past this many bytes ends with QUERY_TOO_COMPLEX (STOREFRONT_MAX_RESPONSE_BYTES)")
	fs.Int64Var(&c.QueryCacheBytes, "query-cache-bytes", envInt("QUERY_CACHE_BYTES", server.DefaultQueryCacheBytes),
		"memory bound of the parsed-query cache and, separately, of the persisted-query store, in bytes (STOREFRONT_QUERY_CACHE_BYTES)")
	fs.IntVar(&c.MaxPersistedQueryBytes, "max-persisted-query-bytes", int(envInt("MAX_PERSISTED_QUERY_BYTES", server.DefaultMaxPersistedQueryBytes)),
		"largest query that may be registered as a persisted query (STOREFRONT_MAX_PERSISTED_QUERY_BYTES)")
}

func validLimits(c *config) error {
	if c.MaxAliases < 1 || c.MaxResponseBytes < 1 || c.QueryCacheBytes < 1 || c.MaxPersistedQueryBytes < 1 {
		return errors.New("--max-query-aliases, --max-response-bytes, --query-cache-bytes and --max-persisted-query-bytes must be at least 1")
	}
	return nil
}
