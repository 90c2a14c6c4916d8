package live

import "github.com/prometheus/client_golang/prometheus"

var (
	descSubscribers = prometheus.NewDesc("storefront_live_subscribers", "goodsStock subscriptions open on this instance.", nil, nil)
	descGoods       = prometheus.NewDesc("storefront_live_goods_watched", "Goods with at least one subscriber on this instance.", nil, nil)
	descPolls       = prometheus.NewDesc("storefront_live_polls_total", "Checks of the watched goods' stock versions (one statement per 1000 goods each).", nil, nil)
	descReads       = prometheus.NewDesc("storefront_live_reads_total", "Database reads by the live hub: version statements and view reads of goods that changed.", nil, nil)
	descPushes      = prometheus.NewDesc("storefront_live_pushes_total", "Messages handed to subscribers after a change (first messages not counted).", nil, nil)
)

type collector struct{ h *Hub }

// Collector exports the hub's Stats on /metrics.
func Collector(h *Hub) prometheus.Collector { return collector{h} }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSubscribers, descGoods, descPolls, descReads, descPushes} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.h.Stats()
	ch <- prometheus.MustNewConstMetric(descSubscribers, prometheus.GaugeValue, float64(s.Subscribers))
	ch <- prometheus.MustNewConstMetric(descGoods, prometheus.GaugeValue, float64(s.Goods))
	ch <- prometheus.MustNewConstMetric(descPolls, prometheus.CounterValue, float64(s.Polls))
	ch <- prometheus.MustNewConstMetric(descReads, prometheus.CounterValue, float64(s.Reads))
	ch <- prometheus.MustNewConstMetric(descPushes, prometheus.CounterValue, float64(s.Pushes))
}
