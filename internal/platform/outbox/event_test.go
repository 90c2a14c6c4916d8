package outbox

import (
	"fmt"
	"testing"
	"time"

	"storefront/ent"
)

// RowEvents gives each event of a row its own aggregate: a row's own, or,
// in a row of several, the one written beside the event (Many). A row of a
// release before aggregate types (no aggregate_type: every event an
// order's, named in its payload) gives the order its payload names, the
// subject its CloudEvent had then.
func TestRowEventsGiveEachEventItsAggregate(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	many, err := Many("test", "TestHappened", at, 2, func(i int) (string, []byte, error) {
		return fmt.Sprint("t-", i), fmt.Appendf(nil, `{"n":%d}`, i), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	one, err := One(Aggregate{Type: "test", ID: "t-9"}, "TestHappened", map[string]int{"n": 9}, at)
	if err != nil {
		t.Fatal(err)
	}
	row := func(r *Record) *ent.Outbox {
		return &ent.Outbox{ID: 1, EventID: r.EventID, Type: r.Type, AggregateType: r.Aggregate.Type, AggregateID: r.Aggregate.ID,
			Payload: r.Payload, CreatedAt: r.At, Events: r.Events}
	}
	order := func(sn string) Aggregate { return Aggregate{Type: "order", ID: sn} }
	for _, tc := range []struct {
		name string
		row  *ent.Outbox
		want []Aggregate
	}{
		{"one event", row(one), []Aggregate{{"test", "t-9"}}},
		{"a row of several", row(many), []Aggregate{{"test", "t-0"}, {"test", "t-1"}}},
		{"an older release's event", &ent.Outbox{ID: 2, EventID: "e", Type: "OrderPaid", AggregateID: "42",
			Payload: `{"amount":"1.00","orderSn":"sn-42"}`, Events: 1}, []Aggregate{order("sn-42")}},
		{"an older release's row of several", &ent.Outbox{ID: 3, EventID: "e", Type: "OrderPlaced", Events: 2,
			Payload: `[{"eventId":"a","payload":{"orderSn":"sn-1"}},{"eventId":"b","payload":{"orderSn":"sn-2"}}]`}, []Aggregate{order("sn-1"), order("sn-2")}},
		{"an older release's event naming no order", &ent.Outbox{ID: 4, EventID: "e", Type: "DuplicatePayment",
			Payload: `{"paymentId":"p"}`, Events: 1}, []Aggregate{order("")}},
	} {
		evs, err := RowEvents(tc.row)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []Aggregate
		for _, e := range evs {
			got = append(got, e.Aggregate)
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s: aggregates %v, want %v", tc.name, got, tc.want)
		}
	}
}
