package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/internal/platform/store"
)

// Event types written to the outbox: every order event, whichever package's
// transaction writes it (payments' too), is one of these.
const (
	EventOrderPlaced   = "OrderPlaced"   // placeOrder (place.go, the batch)
	EventOrderClosed   = "OrderClosed"   // UNPAID → CLOSED (CloseTx: Cancel, Timeout)
	EventOrderPaid     = "OrderPaid"     // UNPAID → PAID (PayTx)
	EventOrderRefunded = "OrderRefunded" // PAID → REFUNDED (CloseTx: Refund)
	// CLOSED → PAID: a lock-mode order's money came after its lock was
	// released, and available stock still covered it (PayTx).
	EventOrderPaidAfterClose = "OrderPaidAfterClose"
	// A payment the order did not need, flagged for a person (PayTx):
	EventPaymentForClosedOrder = "PaymentForClosedOrder" // the order was closed first
	EventDuplicatePayment      = "DuplicatePayment"      // another payment paid it
)

type eventLine struct {
	ItemID   int64 `json:"itemId,string"`
	Quantity int64 `json:"quantity"`
}

type eventPayload struct {
	OrderSn string      `json:"orderSn"`
	UserID  string      `json:"userId"`
	Status  string      `json:"status"`
	Amount  string      `json:"amount"`
	Reason  string      `json:"reason,omitempty"`
	Lines   []eventLine `json:"lines"`
}

// emit writes an event about o in the caller's transaction.
func emit(ctx context.Context, tx *ent.Tx, typ string, o *Order, reason string, at time.Time) error {
	return Emit(ctx, tx, typ, o.ID, payloadOf(o, reason), at)
}

func payloadOf(o *Order, reason string) eventPayload {
	p := eventPayload{OrderSn: o.OrderSn, UserID: o.UserID, Status: string(o.Status), Amount: o.Amount.String(), Reason: reason}
	for _, l := range o.Lines {
		p.Lines = append(p.Lines, eventLine{ItemID: l.ItemID, Quantity: l.Quantity})
	}
	return p
}

// Emit writes an event about order orderID in the caller's transaction: it
// exists if and only if the change it announces committed, and is dispatched
// only after that. Every order event goes through here (payments too).
func Emit(ctx context.Context, tx *ent.Tx, typ string, orderID int64, payload any, at time.Time) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("encoding %s event: %w", typ, err)
	}
	e := &eventRecord{id: newEventID(), typ: typ, aggregate: &Order{ID: orderID}, payload: string(b), at: at, events: 1}
	if err := store.Exec(ctx, tx, store.NewInsert(outbox.Table).Row(e.write)); err != nil {
		return fmt.Errorf("writing %s event: %w", typ, err)
	}
	return nil
}

// placedEvent is the one outbox row announcing the orders of a batch
// (placedRow).
func placedEvent(orders []*Order, at time.Time) (*eventRecord, error) {
	payload, events, err := placedRow(orders)
	if err != nil {
		return nil, fmt.Errorf("encoding %s events: %w", EventOrderPlaced, err)
	}
	e := &eventRecord{id: newEventID(), typ: EventOrderPlaced, payload: payload, at: at, events: events}
	if events == 1 {
		e.aggregate = orders[0]
	}
	return e, nil
}

// batchedEvent is one event of a row that carries several (ent/schema/outbox.go).
type batchedEvent struct {
	EventID string          `json:"eventId"`
	Payload json.RawMessage `json:"payload"`
}

// placedRow returns the payload and event count of the one outbox row
// announcing the orders of a batch. One order's row is an ordinary event
// (its aggregate is the order's id, as on the plain path); several orders'
// row holds their OrderPlaced events in order, each with its own id, and no
// order ids: MySQL numbers the orders on the server, in the same round trip,
// and the dispatcher finds them by order number.
func placedRow(orders []*Order) (payload string, events int, err error) {
	if len(orders) == 1 {
		b, err := json.Marshal(payloadOf(orders[0], ""))
		return string(b), 1, err
	}
	payload, err = batchedPayload(orders, "")
	return payload, len(orders), err
}

// batchedPayload is the payload of a row of several orders' events, each
// with its own id and reason. Assembled by hand: json.Marshal would validate
// and compact every payload again (a RawMessage), which showed in the
// batch's profile.
func batchedPayload(orders []*Order, reason string) (string, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, o := range orders {
		p, err := json.Marshal(payloadOf(o, reason))
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"eventId":"`)
		b.WriteString(newEventID()) // hex digits and dashes: nothing to escape
		b.WriteString(`","payload":`)
		b.Write(p)
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String(), nil
}

// Event is a dispatched outbox event.
type Event struct {
	ID   string
	Type string
	// AggregateID is the order's id for an event in a row of its own, and
	// empty for one of a batch's row: no consumer needs it (a CloudEvent's
	// subject is the order number, which every payload carries), and
	// finding the batch's ids was a query per row, one in every ~25 orders
	// of a hot SKU (docs/benchmarks.md, "CPU per order").
	AggregateID string
	Payload     string
	At          time.Time // when the change it announces committed (the row's created_at)
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
// dispatcher hands them out, without reading anything else (a row of
// several has no order ids: Event.AggregateID). The webhooks read a
// batch's row again through here when they send its events.
func RowEvents(r *ent.Outbox) ([]Event, error) {
	row := Row{ID: r.ID, EventID: r.EventID, Events: r.Events}
	if r.Events == 1 {
		return []Event{{ID: r.EventID, Type: r.Type, AggregateID: r.AggregateID, Payload: r.Payload, At: r.CreatedAt, Row: row}}, nil
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
		out[i] = Event{ID: e.EventID, Type: r.Type, Payload: string(e.Payload), At: r.CreatedAt, Row: row}
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
	slog.DebugContext(ctx, "event", "event_id", e.ID, "type", e.Type, "aggregate_id", e.AggregateID, "payload", e.Payload)
	return nil
}

// Dispatch is DispatchLane of the broker's lane with a sink of one event
// at a time: what the tests of the events an order writes look at.
func (s *Service) Dispatch(ctx context.Context, sink Sink, batch int) (int, error) {
	return s.DispatchLane(ctx, LaneBroker, sink.Batch(), batch)
}
