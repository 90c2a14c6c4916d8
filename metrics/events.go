package metrics

import "github.com/prometheus/client_golang/prometheus"

// Events are the outbox's and its sinks' metrics (serve's dispatcher,
// events/, webhooks/).
type Events struct {
	// Pending is the outbox's backlog: events committed, not yet
	// dispatched; OldestAge how long the oldest of them has waited. Both
	// grow while NATS is down; alert on the age.
	Pending   prometheus.Gauge
	OldestAge prometheus.Gauge
	// Dispatched counts events handed to every sink, by this instance.
	Dispatched prometheus.Counter
	// DispatchErrors counts dispatch passes that stopped on an error (a
	// broker down, a database blip).
	DispatchErrors prometheus.Counter
	// Lag is commit (the outbox row's created_at) to NATS's ack.
	Lag prometheus.Histogram
}

func newEvents() *Events {
	return &Events{
		Pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "storefront_outbox_pending_events",
			Help: "Order events committed and not yet dispatched (to NATS and the webhook queue).",
		}),
		OldestAge: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "storefront_outbox_oldest_pending_age_seconds",
			Help: "Age of the oldest undispatched order event; 0 when none waits.",
		}),
		Dispatched: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "storefront_events_dispatched_total",
			Help: "Order events this instance handed to every sink.",
		}),
		DispatchErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "storefront_events_dispatch_errors_total",
			Help: "Dispatch passes that stopped on an error (NATS unreachable, database errors); their events wait.",
		}),
		Lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "storefront_events_lag_seconds",
			Help:    "Commit of an order event to NATS JetStream's ack (commit times are stored to the second on some paths).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}),
	}
}

func (e *Events) collectors() []prometheus.Collector {
	return []prometheus.Collector{e.Pending, e.OldestAge, e.Dispatched, e.DispatchErrors, e.Lag}
}
