package main

import (
	"errors"
	"time"
)

// graphqlFlags are the GraphQL endpoint's limits, checked before any
// resolver runs. docs/operations.md says why each default.
type graphqlFlags struct {
	RequestTimeout         time.Duration      `name:"request-timeout" env:"STOREFRONT_REQUEST_TIMEOUT" default:"${request_timeout}" help:"deadline of one GraphQL request or payment notification"`
	MaxQueryDepth          int                `name:"max-query-depth" env:"STOREFRONT_MAX_QUERY_DEPTH" default:"${max_query_depth}" help:"deepest GraphQL selection accepted"`
	MaxComplexity          int                `name:"max-query-complexity" env:"STOREFRONT_MAX_QUERY_COMPLEXITY" default:"${max_query_complexity}" help:"highest GraphQL query complexity accepted; lists count first × their fields"`
	MaxAliases             int                `name:"max-query-aliases" env:"STOREFRONT_MAX_QUERY_ALIASES" default:"${max_query_aliases}" help:"most aliased fields in one GraphQL operation, counted where fragments are spread"`
	MaxResponseBytes       int64              `name:"max-response-bytes" env:"STOREFRONT_MAX_RESPONSE_BYTES" default:"${max_response_bytes}" help:"a query whose answer grows past this many bytes ends with QUERY_TOO_COMPLEX"`
	QueryCacheBytes        int64              `name:"query-cache-bytes" env:"STOREFRONT_QUERY_CACHE_BYTES" default:"${query_cache_bytes}" help:"memory bound of the parsed-query cache and, separately, of the persisted-query store, in bytes"`
	MaxPersistedQueryBytes int                `name:"max-persisted-query-bytes" env:"STOREFRONT_MAX_PERSISTED_QUERY_BYTES" default:"${max_persisted_query_bytes}" help:"largest query that may be registered as a persisted query"`
	Cache                  responseCacheFlags `embed:""`
}

func (g *graphqlFlags) Validate() error {
	switch {
	case g.RequestTimeout <= 0:
		return errors.New("--request-timeout must be positive")
	case g.MaxQueryDepth < 1 || g.MaxComplexity < 1:
		return errors.New("--max-query-depth and --max-query-complexity must be at least 1")
	case g.MaxAliases < 1 || g.MaxResponseBytes < 1 || g.QueryCacheBytes < 1 || g.MaxPersistedQueryBytes < 1:
		return errors.New("--max-query-aliases, --max-response-bytes, --query-cache-bytes and --max-persisted-query-bytes must be at least 1")
	}
	return nil
}
