package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"storefront/internal/catalog"
)

// counters exports a cache's counters, all read at once per scrape by read
// (in the order of their names): the product-view cache's and the
// response cache's.
type counters struct {
	descs []*prometheus.Desc
	read  func() []uint64
}

func newCounters(names [][2]string, read func() []uint64) *counters {
	c := &counters{read: read}
	for _, n := range names {
		c.descs = append(c.descs, prometheus.NewDesc(n[0], n[1], nil, nil))
	}
	return c
}

func (c *counters) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *counters) Collect(ch chan<- prometheus.Metric) {
	for i, v := range c.read() {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.CounterValue, float64(v))
	}
}

var catalogCacheNames = [][2]string{
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
	return newCounters(catalogCacheNames, func() []uint64 {
		s := cat.CacheStats()
		return []uint64{s.Hits, s.Misses, s.Revalidations, s.Reloads, s.Rejected, s.Dropped, s.Evicted}
	})
}
