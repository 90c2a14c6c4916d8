package metrics

import "github.com/prometheus/client_golang/prometheus"

// Events are the outbox's and its sinks' metrics (serve's dispatcher,
// events/, webhooks/), for every domain's events alike. Each sink has its
// lane of the outbox (internal/platform/outbox/lanes.go), labelled lane="broker" (NATS, or the log) or
// lane="webhooks" (the webhook queue).
type Events struct {
	// Pending is the outbox's backlog: events committed and not yet taken
	// by every lane; OldestAge how long the oldest of them has waited.
	// Both grow while NATS is down; alert on the age.
	Pending   prometheus.Gauge
	OldestAge prometheus.Gauge
	// LanePending and LaneOldestAge are the same for each lane: the lane
	// whose age grows names the sink that is stuck.
	LanePending   *prometheus.GaugeVec
	LaneOldestAge *prometheus.GaugeVec
	// Dispatched counts events a lane's sink took, by this instance.
	Dispatched *prometheus.CounterVec
	// DispatchErrors counts a lane's dispatch passes that stopped on an
	// error (a broker down, a database blip); the lane backs off.
	DispatchErrors *prometheus.CounterVec
	// Lag is commit (the outbox row's created_at) to NATS's ack.
	Lag prometheus.Histogram
}

func newEvents() *Events {
	return &Events{
		Pending: gauge("storefront_outbox_pending_events",
			"Events committed and not yet taken by every sink (NATS and the webhook queue)."),
		OldestAge: gauge("storefront_outbox_oldest_pending_age_seconds",
			"Age of the oldest event some sink has not taken; 0 when none waits."),
		LanePending: gaugeVec("storefront_outbox_lane_pending_events",
			"Events committed and not yet taken by the lane's sink (broker: NATS or the log; webhooks: the webhook queue).", "lane"),
		LaneOldestAge: gaugeVec("storefront_outbox_lane_oldest_pending_age_seconds",
			"Age of the oldest event the lane's sink has not taken; 0 when none waits.", "lane"),
		Dispatched: counterVec("storefront_events_dispatched_total",
			"Events this instance handed to the lane's sink.", "lane"),
		DispatchErrors: counterVec("storefront_events_dispatch_errors_total",
			"Dispatch passes of the lane that stopped on an error (NATS unreachable or full, database errors); its events wait and the lane backs off.", "lane"),
		Lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "storefront_events_lag_seconds",
			Help:    "Commit of an event to NATS JetStream's ack (commit times are stored to the second on some paths).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
	}
}

func (e *Events) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.Pending, e.OldestAge, e.LanePending, e.LaneOldestAge, e.Dispatched, e.DispatchErrors, e.Lag}
}
