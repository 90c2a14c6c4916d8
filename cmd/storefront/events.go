package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"storefront/internal/platform/events"
	"storefront/internal/platform/metrics"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/tracing"
	"storefront/internal/webhooks"
)

// eventsConfig is where the outbox's events go: NATS JetStream when a URL is
// given (else the log), and the webhooks' delivery policy.
type eventsConfig struct {
	NATS          string
	Stream        string
	SubjectPrefix string
	Retry         string // comma-separated durations
	Timeout       time.Duration
	AllowPrivate  bool
	retry         []time.Duration // Retry, parsed by validEvents
}

func eventsFlags(fs *flag.FlagSet, c *eventsConfig) {
	fs.StringVar(&c.NATS, "events-nats", env("EVENTS_NATS", ""), "publish order events to this NATS JetStream server, e.g. nats://127.0.0.1:4222 (default: log them) (STOREFRONT_EVENTS_NATS)")
	fs.StringVar(&c.Stream, "events-stream", env("EVENTS_STREAM", events.DefaultStream), "JetStream stream of the events, created when missing (STOREFRONT_EVENTS_STREAM)")
	fs.StringVar(&c.SubjectPrefix, "events-subject-prefix", env("EVENTS_SUBJECT_PREFIX", events.DefaultSubjectPrefix), "events go to subject PREFIX.<type> (STOREFRONT_EVENTS_SUBJECT_PREFIX)")
	fs.StringVar(&c.Retry, "webhook-retry", env("WEBHOOK_RETRY", "5s,5m,30m,2h,5h,10h,10h"), "waits before each retry of a failed webhook delivery; after the last it is failed (STOREFRONT_WEBHOOK_RETRY)")
	fs.DurationVar(&c.Timeout, "webhook-timeout", envDuration("WEBHOOK_TIMEOUT", 10*time.Second), "one webhook attempt's time limit (STOREFRONT_WEBHOOK_TIMEOUT)")
	fs.BoolVar(&c.AllowPrivate, "webhook-allow-private", envBool("WEBHOOK_ALLOW_PRIVATE", false), "accept webhooks on loopback, private and link-local addresses (STOREFRONT_WEBHOOK_ALLOW_PRIVATE)")
}

func validEvents(c *eventsConfig) error {
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
func openSinks(ctx context.Context, c *eventsConfig, hooks *webhooks.Service, m *metrics.Metrics, tr *tracing.Tracing) (*sinks, error) {
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
	// Each sink on its own lane: the webhooks no longer wait for NATS to
	// take an event first (issue 38).
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
func (c *eventsConfig) webhooks(instance string) webhooks.Config {
	return webhooks.Config{Retry: c.retry, Timeout: c.Timeout, AllowPrivate: c.AllowPrivate, Source: events.DefaultSource, Instance: instance}
}
