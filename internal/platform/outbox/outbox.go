// Package outbox is every domain's event bus: events written in the transaction of the change they announce, and dispatched after commit to each sink's lane.
package outbox

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"storefront/ent"
	entoutbox "storefront/ent/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

// Aggregate is what an event is about: its type ("order") and its id (the
// order's orderSn), which the CloudEvent names as its subject. A domain
// names its own; the outbox reads neither.
type Aggregate struct {
	Type string
	ID   string
}

// Record is one outbox row: one event (One), or several events of one type
// about aggregates of one type (Many). Write is the row's one definition;
// a domain that sends its own statements (checkout's group-commit batch)
// renders it with them.
type Record struct {
	EventID string
	Type    string
	// Aggregate is the event's; a row of several has the type only, and
	// each event's id in its payload.
	Aggregate Aggregate
	Payload   string
	At        time.Time // when the change it announces committed
	Events    int
	// Trace is the W3C traceparent of the span that wrote the row (""
	// with tracing off): its events' publish and webhook attempts join
	// that trace. Insert takes it from its context when it is empty.
	Trace string
}

// Write is r's row.
func (r *Record) Write(v store.Values) {
	v.Str(entoutbox.FieldEventID, r.EventID)
	v.Str(entoutbox.FieldType, r.Type)
	v.Str(entoutbox.FieldAggregateType, r.Aggregate.Type)
	v.Str(entoutbox.FieldAggregateID, r.Aggregate.ID)
	v.Str(entoutbox.FieldPayload, r.Payload)
	v.Time(entoutbox.FieldCreatedAt, r.At)
	v.Int(entoutbox.FieldEvents, int64(r.Events))
	if r.Trace != "" {
		// Only with tracing on: off, the row and its statement are as
		// they were.
		v.Str(entoutbox.FieldTraceparent, r.Trace)
	}
}

// Insert writes r in tx: it exists if and only if the change it announces
// commits, and is dispatched only after that.
func Insert(ctx context.Context, tx *ent.Tx, r *Record) error {
	if r.Trace == "" {
		r.Trace = tracing.Traceparent(ctx)
	}
	if err := store.Exec(ctx, tx, store.NewInsert(entoutbox.Table).Row(r.Write)); err != nil {
		return fmt.Errorf("writing %s event: %w", r.Type, err)
	}
	return nil
}

// Emit writes an event of type typ about a, with payload as its JSON, in
// tx (Insert): the one call a domain needs to announce a change.
func Emit(ctx context.Context, tx *ent.Tx, a Aggregate, typ string, payload any, at time.Time) error {
	r, err := One(a, typ, payload, at)
	if err != nil {
		return err
	}
	return Insert(ctx, tx, r)
}

// One is the record of one event of type typ about a.
func One(a Aggregate, typ string, payload any, at time.Time) (*Record, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("encoding %s event: %w", typ, err)
	}
	return &Record{EventID: newEventID(), Type: typ, Aggregate: a, Payload: string(b), At: at, Events: 1}, nil
}

// batchedEvent is one event of a row of several (ent/schema/outbox.go).
type batchedEvent struct {
	EventID     string          `json:"eventId"`
	AggregateID string          `json:"aggregateId"`
	Traceparent string          `json:"traceparent,omitempty"`
	Payload     json.RawMessage `json:"payload"`
}

// Many is the record of n events of type typ, about n aggregates of type
// aggType, in one row: each(i) gives the i-th's aggregate id and its
// payload's JSON, and trace (nil: none) its W3C traceparent, the trace of
// the request that asked for it (a group-commit batch's orders each come
// from their own request). One event's row is an ordinary one (One's); several
// events' row holds them in order, each with its own id and aggregate id.
// A row per event cost the hot SKU's group-commit batch a tenth of its
// database CPU per order (docs/checkout.md, "Outbox").
//
// The payload is assembled by hand: json.Marshal would validate and
// compact every payload again (a RawMessage), which showed in the batch's
// profile.
func Many(aggType, typ string, at time.Time, n int, each func(i int) (id string, payload []byte, err error), trace func(i int) string) (*Record, error) {
	if n == 1 {
		id, p, err := each(0)
		if err != nil {
			return nil, fmt.Errorf("encoding %s event: %w", typ, err)
		}
		r := &Record{EventID: newEventID(), Type: typ, Aggregate: Aggregate{Type: aggType, ID: id}, Payload: string(p), At: at, Events: 1}
		if trace != nil {
			r.Trace = trace(0)
		}
		return r, nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		id, p, err := each(i)
		if err != nil {
			return nil, fmt.Errorf("encoding %s events: %w", typ, err)
		}
		aid, err := json.Marshal(id)
		if err != nil {
			return nil, fmt.Errorf("encoding %s events: %w", typ, err)
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"eventId":"`)
		b.WriteString(newEventID()) // hex digits and dashes: nothing to escape
		b.WriteString(`","aggregateId":`)
		b.Write(aid)
		if trace != nil {
			if tp := trace(i); tp != "" {
				b.WriteString(`,"traceparent":"`)
				b.WriteString(tp) // hex digits and dashes
				b.WriteByte('"')
			}
		}
		b.WriteString(`,"payload":`)
		b.Write(p)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return &Record{EventID: newEventID(), Type: typ, Aggregate: Aggregate{Type: aggType}, Payload: b.String(), At: at, Events: n}, nil
}

// newEventID returns a random UUID (version 4) for an outbox event.
func newEventID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0x0f])
	}
	return string(out)
}
