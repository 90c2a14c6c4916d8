// Package metrics defines the service's Prometheus metrics (prefix
// storefront_) in one place, so the names an operator alerts on are listed
// together and every component counts into the same registry.
package metrics

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the service's own metrics. The zero value is not usable: call New.
type Metrics struct {
	// GraphQL, counted by server's operation extension. operation is the
	// first root field (bounded by the schema, unlike client-chosen
	// operation names); outcome is ok, error or rejected (refused before
	// any resolver ran: parse, validation, limits).
	Requests *prometheus.CounterVec
	Latency  *prometheus.HistogramVec
	// Errors counts every GraphQL error by extensions.code.
	Errors *prometheus.CounterVec

	OrdersPlaced prometheus.Counter
	OutOfStock   prometheus.Counter
	Replays      prometheus.Counter     // placeOrder answered from a finished idempotency key
	OrdersClosed *prometheus.CounterVec // cause: timeout, cancel
	Payments     *prometheus.CounterVec // outcome of provider notifications
	TxRetries    *prometheus.CounterVec // cause: deadlock, lock_wait, busy

	// Reconciliation, set by the periodic check in serve.
	LedgerDiffSKUs  prometheus.Gauge
	LockDiffSKUs    prometheus.Gauge
	NegativeSKUs    prometheus.Gauge
	ReconcileErrors prometheus.Counter
	ReconcileLast   prometheus.Gauge

	Events *Events // the outbox and its sinks (events.go)
}

// New returns fresh, unregistered metrics.
func New() *Metrics {
	return &Metrics{
		Events: newEvents(),
		Requests: counterVec("storefront_graphql_requests_total",
			"GraphQL operations by first root field and outcome (ok, error, rejected).", "operation", "outcome"),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "storefront_graphql_request_duration_seconds",
			Help:    "GraphQL operation latency from the start of the request to the response.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"operation", "outcome"}),
		Errors: counterVec("storefront_graphql_errors_total",
			"GraphQL errors by operation and extensions.code.", "operation", "code"),
		OrdersPlaced: counter("storefront_orders_placed_total",
			"Successful placeOrder operations (idempotent replays included)."),
		Replays: counter("storefront_idempotent_replays_total",
			"placeOrder requests answered with the order of a finished idempotency key (double clicks, client retries)."),
		OutOfStock: counter("storefront_out_of_stock_total",
			"placeOrder operations refused with OUT_OF_STOCK."),
		OrdersClosed: counterVec("storefront_orders_closed_total",
			"Orders closed by this instance, by cause (timeout: the closer; cancel: cancelOrder).", "cause"),
		Payments: counterVec("storefront_payment_notifications_total",
			"Provider notifications by outcome (success, refused, bad_signature, too_large, unavailable, error).", "outcome"),
		TxRetries: counterVec("storefront_tx_retries_total",
			"Transactions retried after a transient conflict, by cause (deadlock, lock_wait, busy).", "cause"),
		LedgerDiffSKUs: gauge("storefront_stock_ledger_diff_skus",
			"SKUs whose stock differs from the sum of their ledger rows at the last reconciliation. Alert when > 0."),
		LockDiffSKUs: gauge("storefront_stock_lock_diff_skus",
			"SKUs whose lock_stock differs from the units of unpaid lock-mode lines, or is negative or above stock, at the last reconciliation. Alert when > 0."),
		NegativeSKUs: gauge("storefront_stock_negative_skus",
			"SKUs with stock below zero at the last reconciliation (oversold). Alert when > 0."),
		ReconcileErrors: counter("storefront_reconcile_errors_total",
			"Periodic reconciliations that could not run (the gauges then keep their last value)."),
		ReconcileLast: gauge("storefront_reconcile_last_success_timestamp_seconds",
			"Unix time of the last completed reconciliation. Alert when it stops advancing."),
	}
}

// Collectors lists every metric for registration.
func (m *Metrics) Collectors() []prometheus.Collector {
	return append([]prometheus.Collector{
		m.Requests, m.Latency, m.Errors, m.OrdersPlaced, m.Replays, m.OutOfStock, m.OrdersClosed,
		m.Payments, m.TxRetries, m.LedgerDiffSKUs, m.LockDiffSKUs, m.NegativeSKUs, m.ReconcileErrors, m.ReconcileLast,
	}, m.Events.collectors()...)
}

// The constructors of the metrics above: a metric is its name, its help and
// its labels, spelled once.
func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
}
