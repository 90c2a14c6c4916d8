package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"storefront/internal/platform/events"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/tracing"
	"storefront/internal/webhooks"
)

// eventsFlags are where the outbox's events go: NATS JetStream when a URL
// is given (else the log), and the webhooks' delivery policy.
type eventsFlags struct {
	OutboxInterval time.Duration `name:"outbox-interval" env:"STOREFRONT_OUTBOX_INTERVAL" default:"1s" help:"how often committed events are dispatched"`
	NATS           string        `name:"events-nats" env:"STOREFRONT_EVENTS_NATS" help:"publish order events to this NATS JetStream server, e.g. nats://127.0.0.1:4222 (default: log them)"`
	Stream         string        `name:"events-stream" env:"STOREFRONT_EVENTS_STREAM" default:"${events_stream}" help:"JetStream stream of the events, created when missing"`
	SubjectPrefix  string        `name:"events-subject-prefix" env:"STOREFRONT_EVENTS_SUBJECT_PREFIX" default:"${events_subject_prefix}" help:"events go to subject PREFIX.<type>"`
	Retry          string        `name:"webhook-retry" env:"STOREFRONT_WEBHOOK_RETRY" default:"5s,5m,30m,2h,5h,10h,10h" help:"waits before each retry of a failed webhook delivery; after the last it is failed"`
	Timeout        time.Duration `name:"webhook-timeout" env:"STOREFRONT_WEBHOOK_TIMEOUT" default:"10s" help:"one webhook attempt's time limit"`
	AllowPrivate   bool          `name:"webhook-allow-private" env:"STOREFRONT_WEBHOOK_ALLOW_PRIVATE" help:"accept webhooks on loopback, private and link-local addresses"`

	retry []time.Duration // Retry, parsed by Validate
}

func (c *eventsFlags) Validate() error {
	if c.OutboxInterval <= 0 {
		return errors.New("--outbox-interval must be positive")
	}
	c.retry = nil
	for _, s := range strings.Split(c.Retry, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("--webhook-retry: %q is not a positive duration", s)
		}
		c.retry = append(c.retry, d)
	}
	if c.Timeout <= 0 {
		return errors.New("--webhook-timeout must be positive")
	}
	if c.NATS != "" && (c.Stream == "" || strings.ContainsAny(c.Stream, ". *>")) {
		return fmt.Errorf("--events-stream %q: want a name without spaces, dots or wildcards", c.Stream)
	}
	if c.NATS != "" && (c.SubjectPrefix == "" || strings.ContainsAny(c.SubjectPrefix, " *>")) {
		return fmt.Errorf("--events-subject-prefix %q: want subject tokens without wildcards", c.SubjectPrefix)
	}
	return nil
}

// sinks are where each lane of the outbox hands its events.
type sinks struct {
	lanes map[outbox.Lane]outbox.BatchSink
	hooks *webhooks.Service
	close func()
}

// openSinks connects to NATS (a stream that exists without our subjects
// stops serve here) and puts the webhooks on a lane of their own.
func openSinks(ctx context.Context, c *eventsFlags, hooks *webhooks.Service, m *metrics.Metrics, tr *tracing.Tracing) (*sinks, error) {
	s := &sinks{hooks: hooks, close: func() {}}
	broker := outbox.Sink(outbox.LogSink).Batch()
	if c.NATS != "" {
		n, err := events.Connect(ctx, events.NATSConfig{URL: c.NATS, Stream: c.Stream, SubjectPrefix: c.SubjectPrefix,
			OnAck: func(lag time.Duration) { m.Events.Lag.Observe(lag.Seconds()) }, Tracing: tr})
		if err != nil {
			return nil, err
		}
		broker, s.close = n.Sink(), n.Close
	}
	// Each sink on its own lane: the webhooks do not wait for NATS to take
	// an event first.
	s.lanes = map[outbox.Lane]outbox.BatchSink{
		outbox.LaneBroker:   counted(outbox.LaneBroker, broker, m),
		outbox.LaneWebhooks: counted(outbox.LaneWebhooks, hooks.Sink(), m),
	}
	return s, nil
}

// counted is sink counting the events it takes on lane's series.
func counted(lane outbox.Lane, sink outbox.BatchSink, m *metrics.Metrics) outbox.BatchSink {
	c := m.Events.Dispatched.WithLabelValues(lane.String())
	return func(ctx context.Context, evs []outbox.Event) (int, error) {
		n, err := sink(ctx, evs)
		c.Add(float64(n))
		return n, err
	}
}

// webhooks is the webhooks' delivery policy; their claims carry instance.
func (c *eventsFlags) webhooks(instance string) webhooks.Config {
	return webhooks.Config{Retry: c.retry, Timeout: c.Timeout, AllowPrivate: c.AllowPrivate, Source: events.DefaultSource, Instance: instance}
}
