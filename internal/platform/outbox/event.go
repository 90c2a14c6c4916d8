package outbox

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"storefront/ent"
)

// Event is a dispatched outbox event.
type Event struct {
	ID        string
	Type      string
	Aggregate Aggregate // what it is about; its id is the CloudEvent's subject
	Payload   string
	At        time.Time // when the change it announces committed (the row's created_at)
	// Trace is the W3C traceparent of the change that wrote the event
	// ("": none): its publish and webhook attempts are spans of that trace.
	Trace string
	// Row is the outbox row the event came in (zero: not from the outbox).
	// A sink may keep work per row rather than per event: the webhooks
	// queue a batch's row once per webhook, not once per order.
	Row Row
}

// Row names an outbox row for the sinks.
type Row struct {
	ID int64
	// EventID is the row's own event_id: the event's id for a row of one
	// event; for a row of several, an id no event has.
	EventID string
	Events  int // how many events the row carries
}

// RowEvents returns the events outbox row r carries, in order, as the
// dispatcher hands them out, without reading anything else. The webhooks
// read a batch's row again through here when they send its events.
func RowEvents(r *ent.Outbox) ([]Event, error) {
	row := Row{ID: r.ID, EventID: r.EventID, Events: r.Events}
	var trace string
	if r.Traceparent != nil {
		trace = *r.Traceparent
	}
	if r.Events == 1 {
		a := Aggregate{Type: r.AggregateType, ID: r.AggregateID}
		if a.Type == "" {
			a = legacyAggregate(r.Payload)
		}
		return []Event{{ID: r.EventID, Type: r.Type, Aggregate: a, Payload: r.Payload, At: r.CreatedAt, Trace: trace, Row: row}}, nil
	}
	var evs []batchedEvent
	if err := json.Unmarshal([]byte(r.Payload), &evs); err != nil {
		return nil, fmt.Errorf("outbox row %d: %w", r.ID, err)
	}
	if len(evs) != r.Events {
		return nil, fmt.Errorf("outbox row %d: %d events, its count says %d", r.ID, len(evs), r.Events)
	}
	out := make([]Event, len(evs))
	for i, e := range evs {
		a := Aggregate{Type: r.AggregateType, ID: e.AggregateID}
		if a.Type == "" {
			a = legacyAggregate(string(e.Payload))
		}
		t := e.Traceparent
		if t == "" {
			t = trace
		}
		out[i] = Event{ID: e.EventID, Type: r.Type, Aggregate: a, Payload: string(e.Payload), At: r.CreatedAt, Trace: t, Row: row}
	}
	return out, nil
}

// Sink receives events. Delivery is at least once: a sink must tolerate a
// repeat (the event id identifies it).
type Sink func(context.Context, Event) error

// BatchSink receives the events of several outbox rows at once, in order,
// and returns how many of them, from the first, it accepted (all of them
// when err is nil). A broker's sink publishes them all and then waits for
// the acks, instead of one round trip per event.
type BatchSink func(context.Context, []Event) (int, error)

// Batch is s as a BatchSink: one event after the other, up to the first
// that s refuses.
func (s Sink) Batch() BatchSink {
	return func(ctx context.Context, evs []Event) (int, error) {
		for i, e := range evs {
			if err := s(ctx, e); err != nil {
				return i, err
			}
		}
		return len(evs), nil
	}
}

// LogSink logs each event at level DEBUG: the sink without a broker (serve
// without --events-nats). At INFO a pass logs only how many rows it
// dispatched: a line per event was a tenth of serve's CPU per order on a
// hot SKU (docs/benchmarks.md, "CPU per order").
func LogSink(ctx context.Context, e Event) error {
	slog.DebugContext(ctx, "event", "event_id", e.ID, "type", e.Type, "aggregate_type", e.Aggregate.Type,
		"aggregate_id", e.Aggregate.ID, "payload", e.Payload)
	return nil
}
