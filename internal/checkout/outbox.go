package checkout

import (
	"context"
	"encoding/json"
	"time"

	"storefront/ent"
	"storefront/internal/platform/outbox"
)

// Event types checkout writes to the outbox (internal/platform/outbox): every
// order event, whichever package's transaction writes it (payments' too),
// is one of these.
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
	// A payment that paid the order while its coupon is another order's
	// (payPromo): the order keeps a discount no coupon pays for, flagged.
	EventCouponTakenByAnotherOrder = "CouponTakenByAnotherOrder"
)

type eventLine struct {
	ItemID   int64 `json:"itemId,string"`
	Quantity int64 `json:"quantity"`
}

type eventPayload struct {
	OrderSn string `json:"orderSn"`
	UserID  string `json:"userId"`
	Status  string `json:"status"`
	Amount  string `json:"amount"`
	// An order with a coupon: its discount and the claimed coupon's id
	// (absent otherwise, so the payload of every other order is as it was).
	Discount     string      `json:"discount,omitempty"`
	UserCouponID int64       `json:"userCouponId,omitempty,string"`
	Reason       string      `json:"reason,omitempty"`
	Lines        []eventLine `json:"lines"`
	// The order's adjustments (absent when it has none), as
	// Order.adjustments says them.
	Adjustments []eventAdjustment `json:"adjustments,omitempty"`
}

type eventAdjustment struct {
	Kind     string                `json:"kind"`
	SourceID int64                 `json:"sourceId,omitempty,string"`
	Label    string                `json:"label,omitempty"`
	Amount   string                `json:"amount"`
	Lines    []eventAdjustmentLine `json:"lines"`
}

type eventAdjustmentLine struct {
	ItemID int64  `json:"itemId,string"`
	Amount string `json:"amount"`
}

// aggregateType is the outbox's name for an order: its events' aggregate
// is the order, by its number (the CloudEvent's subject).
const aggregateType = "order"

// EventTypes are checkout's event types, which webhooks may subscribe to
// (internal/app gives them to the webhooks).
var EventTypes = []string{
	EventOrderPlaced, EventOrderPaid, EventOrderClosed, EventOrderRefunded,
	EventOrderPaidAfterClose, EventPaymentForClosedOrder, EventDuplicatePayment, EventCouponTakenByAnotherOrder,
	EventOrderShipped, EventOrderCompleted,
}

// emit writes an event about o in the caller's transaction.
func emit(ctx context.Context, tx *ent.Tx, typ string, o *Order, reason string, at time.Time) error {
	return Emit(ctx, tx, typ, o.OrderSn, payloadOf(o, reason), at)
}

func payloadOf(o *Order, reason string) eventPayload {
	p := eventPayload{OrderSn: o.OrderSn, UserID: o.UserID, Status: string(o.Status), Amount: o.Amount.String(), Reason: reason}
	if o.UserCouponID != 0 {
		p.Discount, p.UserCouponID = o.Discount.String(), o.UserCouponID
	}
	for _, l := range o.Lines {
		p.Lines = append(p.Lines, eventLine{ItemID: l.ItemID, Quantity: l.Quantity})
	}
	for _, a := range o.Adjustments {
		e := eventAdjustment{Kind: string(a.Kind), SourceID: a.SourceID, Label: a.Label, Amount: a.Amount.String()}
		for _, l := range a.Lines {
			e.Lines = append(e.Lines, eventAdjustmentLine{ItemID: l.ItemID, Amount: l.Amount.String()})
		}
		p.Adjustments = append(p.Adjustments, e)
	}
	return p
}

// Emit writes an event about the order numbered orderSn in the caller's
// transaction (outbox.Emit): it exists if and only if the change it
// announces committed, and is dispatched only after that. Every order
// event goes through here (payments too).
func Emit(ctx context.Context, tx *ent.Tx, typ string, orderSn string, payload any, at time.Time) error {
	return outbox.Emit(ctx, tx, outbox.Aggregate{Type: aggregateType, ID: orderSn}, typ, payload, at)
}

// eventsOf is the one outbox row of the events of type typ about orders,
// changed in one transaction (outbox.Many): one order's is an ordinary
// event, several orders' a row of several, each event with its own id and
// its order's number.
// trace (nil: none) is each order's traceparent.
func eventsOf(typ string, orders []*Order, reason string, at time.Time, trace func(i int) string) (*outbox.Record, error) {
	return outbox.Many(aggregateType, typ, at, len(orders), func(i int) (string, []byte, error) {
		p, err := json.Marshal(payloadOf(orders[i], reason))
		return orders[i].OrderSn, p, err
	}, trace)
}

// placedEvent is the one outbox row announcing the orders of a batch: the
// batch writes it in its own statements (eventRecord.write), and MySQL
// numbers the orders on the server in the same round trip, which their
// numbers, the events' aggregate ids, do not need. Each event keeps the
// trace of the request that placed its order (traces, nil with tracing
// off), not the batch's: its publish and webhook attempts join that
// order's trace.
func placedEvent(orders []*Order, traces []string, at time.Time) (*eventRecord, error) {
	var trace func(int) string
	if traces != nil {
		trace = func(i int) string { return traces[i] }
	}
	r, err := eventsOf(EventOrderPlaced, orders, "", at, trace)
	if err != nil {
		return nil, err
	}
	return &eventRecord{r}, nil
}

// emitAll writes the events of type typ about orders, closed in one
// transaction, in one outbox row, as a group-commit batch writes its
// OrderPlaced events (placedEvent): a row per order would be a statement
// per order, as many as the rest of the closer's claim's together.
func emitAll(ctx context.Context, tx *ent.Tx, typ string, orders []*Order, reason string, at time.Time) error {
	r, err := eventsOf(typ, orders, reason, at, nil)
	if err != nil {
		return err
	}
	return outbox.Insert(ctx, tx, r)
}
