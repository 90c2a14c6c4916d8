package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/internal/platform/outbox"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/tracing"
)

// NATSConfig is where serve publishes (--events-nats and friends).
type NATSConfig struct {
	URL           string
	Stream        string // default STOREFRONT
	SubjectPrefix string // default storefront.events: subject <prefix>.<type>
	Source        string // CloudEvents source, default DefaultSource
	// AckTimeout bounds one batch's wait for the broker's acks; the rows of
	// the events left unacked wait for the next pass. Well under
	// outbox.ClaimLease. Default 10 s.
	AckTimeout time.Duration
	// OnAck, when set, is told each event's lag: commit to the broker's ack.
	OnAck func(lag time.Duration)
	// Tracing gives each publish a producer span in its event's trace,
	// ended by the broker's ack, and the message a traceparent header (nil:
	// off).
	Tracing *tracing.Tracing
}

// Defaults of NATSConfig.
const (
	DefaultStream        = "STOREFRONT"
	DefaultSubjectPrefix = "storefront.events"
	// DuplicateWindow is the stream's deduplication window when serve
	// creates it: a re-publish of an event (a crash between the ack and
	// marking its row, a lapsed claim) within it is dropped by JetStream.
	DuplicateWindow = 2 * time.Minute
)

// ErrStreamConflict: the stream exists and does not take our subjects.
var ErrStreamConflict = errors.New("events stream conflict")

// NATS publishes events to JetStream.
type NATS struct {
	cfg   NATSConfig
	nc    *nats.Conn
	js    jetstream.JetStream
	ready atomic.Bool // the stream was found or made
}

// chunk is how many publishes wait for their acks at once.
const chunk = 256

// Connect connects to cfg.URL and makes sure the stream exists. A stream
// that exists without the subjects is an error at once (ErrStreamConflict);
// a broker that cannot be reached is not: Connect returns a sink whose
// publishes fail (the events wait in the outbox) until it is back.
func Connect(ctx context.Context, cfg NATSConfig) (*NATS, error) {
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if cfg.SubjectPrefix == "" {
		cfg.SubjectPrefix = DefaultSubjectPrefix
	}
	cfg.SubjectPrefix = strings.TrimSuffix(cfg.SubjectPrefix, ".")
	if cfg.Source == "" {
		cfg.Source = DefaultSource
	}
	settings.Positive(&cfg.AckTimeout, 10*time.Second)
	nc, err := nats.Connect(cfg.URL, nats.Name("storefront"), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.RetryOnFailedConnect(true),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) { slog.Warn("events: NATS disconnected", "err", err) }),
		nats.ReconnectHandler(func(c *nats.Conn) { slog.Info("events: NATS reconnected", "url", c.ConnectedUrlRedacted()) }))
	if err != nil {
		return nil, fmt.Errorf("--events-nats %s: %w", cfg.URL, err)
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4*chunk))
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("--events-nats: %w", err)
	}
	n := &NATS{cfg: cfg, nc: nc, js: js}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := n.ensureStream(sctx); errors.Is(err, ErrStreamConflict) {
		nc.Close()
		return nil, err
	} else if err != nil {
		slog.Warn("events: NATS not reachable yet; events wait in the outbox", "url", cfg.URL, "err", err)
	}
	return n, nil
}

// Close flushes and closes the connection.
func (n *NATS) Close() {
	_ = n.nc.FlushTimeout(2 * time.Second)
	n.nc.Close()
}

// Subject is the subject of events of type typ.
func (n *NATS) Subject(typ string) string { return n.cfg.SubjectPrefix + "." + typ }

// ensureStream finds the stream, or creates it: subjects <prefix>.>, file
// storage, a duplicate window of DuplicateWindow.
func (n *NATS) ensureStream(ctx context.Context) error {
	want := n.cfg.SubjectPrefix + ".>"
	s, err := n.js.Stream(ctx, n.cfg.Stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		_, err = n.js.CreateStream(ctx, jetstream.StreamConfig{
			Name: n.cfg.Stream, Subjects: []string{want}, Storage: jetstream.FileStorage,
			Duplicates: DuplicateWindow,
		})
		if err != nil {
			return fmt.Errorf("creating stream %s: %w", n.cfg.Stream, err)
		}
		slog.Info("events: created NATS stream", "stream", n.cfg.Stream, "subjects", want)
		n.ready.Store(true)
		return nil
	}
	if err != nil {
		return fmt.Errorf("looking up stream %s: %w", n.cfg.Stream, err)
	}
	cfg := s.CachedInfo().Config
	if !covers(cfg.Subjects, want) {
		return fmt.Errorf("%w: NATS stream %s exists with subjects %v, which do not take %s: add the subject to it, or choose another --events-stream or --events-subject-prefix",
			ErrStreamConflict, n.cfg.Stream, cfg.Subjects, want)
	}
	if cfg.Duplicates < DuplicateWindow {
		slog.Warn("events: NATS stream's duplicate window is short: a re-sent event may be stored twice", "stream", n.cfg.Stream, "duplicates", cfg.Duplicates)
	}
	n.ready.Store(true)
	return nil
}

// covers reports whether a stream with these subjects stores every subject
// that want (a filter ending in ">") matches.
func covers(subjects []string, want string) bool {
	for _, s := range subjects {
		if subjectCovers(s, want) {
			return true
		}
	}
	return false
}

func subjectCovers(pattern, want string) bool {
	p, w := strings.Split(pattern, "."), strings.Split(want, ".")
	for i, tok := range p {
		switch {
		case tok == ">":
			return true
		case i >= len(w) || w[i] == ">":
			return false // want goes deeper than this pattern reaches
		case tok != "*" && tok != w[i]:
			return false
		}
	}
	return len(p) == len(w)
}

// Sink is n as the broker lane's sink: every event published with header
// Nats-Msg-Id = its id, then the acks awaited. It accepts the events up to
// the first one the broker did not acknowledge.
//
// A stream deleted while serve runs is made again: when a publish finds no
// stream (no responders), the sink forgets that the stream was ready,
// looks it up, creates it when missing and sends the rest once more.
// Before, it remembered the stream for the life of the process and every
// publish failed from then on.
func (n *NATS) Sink() outbox.BatchSink {
	return func(ctx context.Context, evs []outbox.Event) (int, error) {
		done, err := n.send(ctx, evs)
		if err == nil || !streamGone(err) {
			return done, err
		}
		n.ready.Store(false)
		slog.Warn("events: NATS stream gone; making it again", "stream", n.cfg.Stream, "err", err)
		k, err := n.send(ctx, evs[done:])
		return done + k, err
	}
}

// send makes sure of the stream (once, until it is found gone) and
// publishes evs chunk by chunk.
func (n *NATS) send(ctx context.Context, evs []outbox.Event) (int, error) {
	if !n.ready.Load() {
		if err := n.ensureStream(ctx); err != nil {
			return 0, err
		}
	}
	for done := 0; done < len(evs); {
		end := min(done+chunk, len(evs))
		k, err := n.publish(ctx, evs[done:end])
		done += k
		if err != nil {
			return done, err
		}
	}
	return len(evs), nil
}

// publishSpan starts the producer span of publishing e as m: a child of
// the change that wrote e (its outbox row's traceparent; the dispatch
// pass's span when it has none), linked to the pass, and m carries its
// traceparent for consumers that trace.
func (n *NATS) publishSpan(ctx context.Context, e outbox.Event, m *nats.Msg) trace.Span {
	pass := trace.SpanContextFromContext(ctx)
	ctx, span := n.cfg.Tracing.Start(tracing.WithTraceparent(ctx, e.Trace), "publish "+m.Subject,
		trace.WithSpanKind(trace.SpanKindProducer), trace.WithLinks(trace.Link{SpanContext: pass}),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.operation.type", "send"),
			attribute.String("messaging.destination.name", m.Subject), attribute.String("messaging.message.id", e.ID),
			attribute.String("cloudevents.event_type", e.Type), attribute.String("cloudevents.event_subject", e.Aggregate.ID)))
	n.cfg.Tracing.Inject(ctx, http.Header(m.Header))
	return span
}

// streamGone reports whether err says that no stream takes the subject: a
// publish with no responders (JetStream answers for a stream only), or a
// lookup that found none.
func streamGone(err error) bool {
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrStreamNotFound)
}

// publish sends evs at once and waits for their acks.
func (n *NATS) publish(ctx context.Context, evs []outbox.Event) (int, error) {
	futures := make([]jetstream.PubAckFuture, 0, len(evs))
	var (
		perr  error
		spans []trace.Span // tracing on: futures[i]'s, ended at its ack
		acked int
		fail  error
	)
	if n.cfg.Tracing.On() {
		spans = make([]trace.Span, 0, len(evs))
		defer func() {
			for i, s := range spans {
				switch {
				case i < acked:
				case i == acked && fail != nil:
					tracing.End(s, fail)
				default:
					tracing.End(s, errors.New("not acknowledged"))
				}
			}
		}()
	}
	for _, e := range evs {
		body, err := Encode(e, n.cfg.Source)
		if err != nil {
			perr = err
			break
		}
		m := nats.NewMsg(n.Subject(e.Type))
		m.Header.Set(jetstream.MsgIDHeader, e.ID)
		m.Data = body
		var span trace.Span
		if spans != nil {
			span = n.publishSpan(ctx, e, m)
		}
		f, err := n.js.PublishMsgAsync(m)
		if err != nil {
			perr = fmt.Errorf("publishing event %s: %w", e.ID, err)
			if span != nil {
				tracing.End(span, perr)
			}
			break
		}
		futures = append(futures, f)
		if span != nil {
			spans = append(spans, span)
		}
	}
	timeout := time.NewTimer(n.cfg.AckTimeout)
	defer timeout.Stop()
	for i, f := range futures {
		select {
		case <-f.Ok():
			if n.cfg.OnAck != nil {
				n.cfg.OnAck(time.Since(evs[i].At))
			}
			if spans != nil {
				spans[i].End()
				acked = i + 1
			}
		case err := <-f.Err():
			fail = fmt.Errorf("publishing event %s: %w", evs[i].ID, err)
			return i, fail
		case <-timeout.C:
			fail = fmt.Errorf("publishing event %s: no ack from NATS in %s", evs[i].ID, n.cfg.AckTimeout)
			return i, fail
		case <-ctx.Done():
			fail = ctx.Err()
			return i, fail
		}
	}
	return len(futures), perr
}
