package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"storefront/internal/catalog"
)

// catalogCache exports the product-view cache's counters, read once per
// scrape from catalog.Service.CacheStats.
type catalogCache struct {
	cat   *catalog.Service
	descs [7]*prometheus.Desc
}

var catalogCacheNames = [7][2]string{
	{"storefront_catalog_cache_hits_total", "Product views served from the cache."},
	{"storefront_catalog_cache_misses_total", "Product views not cached: loaded in full."},
	{"storefront_catalog_cache_revalidations_total", "Cached product views re-checked with one query after the stock TTL."},
	{"storefront_catalog_cache_reloads_total", "Cached product views found edited and loaded in full."},
	{"storefront_catalog_cache_rejected_total", "New cache entries refused by ristretto's admission policy."},
	{"storefront_catalog_cache_dropped_total", "Cache writes dropped because ristretto's buffer was full."},
	{"storefront_catalog_cache_evicted_total", "Cache entries evicted to stay under the max cost."},
}

// CatalogCacheCollector returns a collector of cat's cache counters. New
// registers it itself when Options.Resolver has a catalog.
func CatalogCacheCollector(cat *catalog.Service) prometheus.Collector {
	c := &catalogCache{cat: cat}
	for i, n := range catalogCacheNames {
		c.descs[i] = prometheus.NewDesc(n[0], n[1], nil, nil)
	}
	return c
}

func (c *catalogCache) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *catalogCache) Collect(ch chan<- prometheus.Metric) {
	s := c.cat.CacheStats()
	for i, v := range [7]uint64{s.Hits, s.Misses, s.Revalidations, s.Reloads, s.Rejected, s.Dropped, s.Evicted} {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v))
	}
}
