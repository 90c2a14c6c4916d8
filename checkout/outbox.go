package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/store"
)

// Event types written to the outbox.
const (
	EventOrderPlaced = "OrderPlaced"
	EventOrderClosed = "OrderClosed"
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

// event builds the outbox row announcing o (a batch inserts many at once).
func event(tx *ent.Tx, typ string, o *Order, reason string, at time.Time) (*ent.OutboxCreate, error) {
	return eventRow(tx, typ, o.ID, payloadOf(o, reason), at)
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
	c, err := eventRow(tx, typ, orderID, payload, at)
	if err != nil {
		return err
	}
	if err := c.Exec(ctx); err != nil {
		return fmt.Errorf("writing %s event: %w", typ, err)
	}
	return nil
}

func eventRow(tx *ent.Tx, typ string, orderID int64, payload any, at time.Time) (*ent.OutboxCreate, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return tx.Outbox.Create().SetEventID(newEventID()).SetType(typ).
		SetAggregateID(strconv.FormatInt(orderID, 10)).SetPayload(string(b)).SetCreatedAt(at), nil
}

// Event is a dispatched outbox row.
type Event struct {
	ID          string
	Type        string
	AggregateID string
	Payload     string
}

// Sink receives events. Delivery is at least once: a sink must tolerate a
// repeat (the event id identifies it).
type Sink func(context.Context, Event) error

// LogSink logs each event: the sink until a broker is wired.
func LogSink(ctx context.Context, e Event) error {
	slog.InfoContext(ctx, "event", "event_id", e.ID, "type", e.Type, "aggregate_id", e.AggregateID, "payload", e.Payload)
	return nil
}

// Dispatch hands up to batch undispatched events, oldest first, to sink and
// marks those it accepted. It returns how many it marked.
func (s *Service) Dispatch(ctx context.Context, sink Sink, batch int) (int, error) {
	rows, err := s.db.Client.Outbox.Query().Where(outbox.DispatchedAtIsNil()).
		Order(outbox.ByID()).Limit(batch).All(ctx)
	if err != nil {
		return 0, store.Classify(fmt.Errorf("reading outbox: %w", err))
	}
	var done []int64
	for _, r := range rows {
		if err := sink(ctx, Event{ID: r.EventID, Type: r.Type, AggregateID: r.AggregateID, Payload: r.Payload}); err != nil {
			break // keep order: later events wait for this one
		}
		done = append(done, r.ID)
	}
	if len(done) == 0 {
		return 0, nil
	}
	n, err := s.db.Client.Outbox.Update().Where(outbox.IDIn(done...), outbox.DispatchedAtIsNil()).
		SetDispatchedAt(s.now()).Save(ctx)
	if err != nil {
		return 0, store.Classify(fmt.Errorf("marking events dispatched: %w", err))
	}
	return n, nil
}
