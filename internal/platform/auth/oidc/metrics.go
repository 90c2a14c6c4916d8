package oidc

import "github.com/prometheus/client_golang/prometheus"

var (
	descReady = prometheus.NewDesc("storefront_oidc_ready",
		"1 once the OpenID provider's keys have loaded (its tokens answer UNAVAILABLE before), 0 until then.", nil, nil)
	descKeys = prometheus.NewDesc("storefront_oidc_keys",
		"The OpenID provider's signing keys held (RS256 and ES256 keys with a kid).", nil, nil)
	descFetches = prometheus.NewDesc("storefront_oidc_jwks_fetches_total",
		"Fetches of the OpenID provider's key set, by result (ok; error: the cached keys stay in use).", []string{"result"}, nil)
)

// Collector exports the provider's state for /metrics: a key set that
// never loads, or fetches that keep failing, are worth an alert.
func (p *Provider) Collector() prometheus.Collector { return collector{p} }

type collector struct{ p *Provider }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descReady
	ch <- descKeys
	ch <- descFetches
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	ready := 0.0
	if c.p.Ready() == nil {
		ready = 1
	}
	ch <- prometheus.MustNewConstMetric(descReady, prometheus.GaugeValue, ready)
	ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(c.p.keys.count()))
	ch <- prometheus.MustNewConstMetric(descFetches, prometheus.CounterValue, float64(c.p.keys.fetchesOK.Load()), "ok")
	ch <- prometheus.MustNewConstMetric(descFetches, prometheus.CounterValue, float64(c.p.keys.fetchesFailed.Load()), "error")
}
