package events

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"storefront/internal/platform/outbox"
)

// The CloudEvents 1.0 specification's required attributes (id, source,
// specversion, type) and the optional ones the envelope promises
// (datacontenttype, subject, time), with the spec's constraints: non-empty
// strings, specversion "1.0", source a URI-reference, time RFC 3339, and
// attribute names of lower-case letters and digits only.
func TestEnvelopeHasTheSpecsAttributes(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 123000000, time.FixedZone("CST", 8*3600))
	e := outbox.Event{ID: "0b7a7f7e-3b5c-4d1a-9e0f-2a9b8c7d6e5f", Type: "OrderPaid",
		Aggregate: outbox.Aggregate{Type: "order", ID: "20261201200000000000000001"},
		Payload:   `{"orderSn":"20261201200000000000000001","status":"PAID","amount":"89.00"}`, At: at}
	b, err := Encode(e, DefaultSource)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`^[a-z0-9]{1,20}$`)
	for k := range got {
		if !name.MatchString(k) {
			t.Errorf("attribute name %q is not lower-case letters and digits", k)
		}
	}
	str := func(k string) string {
		var s string
		if err := json.Unmarshal(got[k], &s); err != nil {
			t.Errorf("%s = %s: not a string", k, got[k])
		}
		return s
	}
	for k, want := range map[string]string{
		"specversion": "1.0", "id": e.ID, "source": DefaultSource, "type": "OrderPaid",
		"subject": "20261201200000000000000001", "datacontenttype": "application/json",
		"time": "2026-12-01T12:00:00.123Z",
	} {
		if _, ok := got[k]; !ok {
			t.Errorf("no %s", k)
			continue
		}
		if s := str(k); s != want {
			t.Errorf("%s = %q, want %q", k, s, want)
		}
	}
	if _, err := time.Parse(time.RFC3339, str("time")); err != nil {
		t.Errorf("time: %v", err)
	}
	// data is the payload itself, as JSON (datacontenttype application/json), not a string.
	if string(got["data"]) != e.Payload {
		t.Errorf("data = %s, want the payload %s", got["data"], e.Payload)
	}
	// The same event encodes to the same id every time: it is the outbox's.
	again, _ := Encode(e, DefaultSource)
	if string(again) != string(b) {
		t.Errorf("encoding twice differs:\n%s\n%s", b, again)
	}
	if _, err := Encode(outbox.Event{ID: "x", Payload: "not json"}, DefaultSource); err == nil {
		t.Error("Encode of a payload that is not JSON: no error")
	}
}

func TestSubjectCovers(t *testing.T) {
	for _, tc := range []struct {
		pattern, want string
		ok            bool
	}{
		{"storefront.events.>", "storefront.events.>", true},
		{">", "storefront.events.>", true},
		{"storefront.>", "storefront.events.>", true},
		{"storefront.*.>", "storefront.events.>", true},
		{"storefront.events.*", "storefront.events.>", false}, // one token only: OrderPlaced, not deeper
		{"storefront.events.OrderPlaced", "storefront.events.>", false},
		{"other.>", "storefront.events.>", false},
		{"storefront.events", "storefront.events.>", false},
		{"storefront.events.x.>", "storefront.events.>", false},
	} {
		if got := subjectCovers(tc.pattern, tc.want); got != tc.ok {
			t.Errorf("subjectCovers(%q, %q) = %v, want %v", tc.pattern, tc.want, got, tc.ok)
		}
	}
}

// Encode writes by hand what json.Marshal of the envelope writes.
func TestEncodeIsMarshal(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 5, time.UTC)
	order := func(sn string) outbox.Aggregate { return outbox.Aggregate{Type: "order", ID: sn} }
	for _, e := range []outbox.Event{
		{ID: "a-1", Type: "OrderPlaced", Aggregate: order("2026120100001"), Payload: `{"orderSn":"2026120100001","userId":"u","lines":[{"itemId":"3","quantity":1}]}`, At: at},
		{ID: "a-2", Type: "OrderPaid", Aggregate: order("2026120100002"), Payload: `{"amount":"89.00","orderSn":"2026120100002"}`, At: at.Add(time.Second)},
		{ID: "a-3", Type: "OrderClosed", Aggregate: order("a\"b<c>é"), Payload: `{"orderSn":"a\"b\u003cc\u003e\u00e9","reason":"x"}` /* as json.Marshal writes it */, At: at},
		{ID: "a-4", Type: "DuplicatePayment", Payload: `{"paymentId":"p"}`, At: at},
		// Traced: the distributed-tracing extension's traceparent.
		{ID: "a-5", Type: "OrderPaid", Aggregate: order("2026120100005"), Payload: `{"orderSn":"2026120100005"}`, At: at,
			Trace: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
	} {
		for _, source := range []string{DefaultSource, "https://shop.example/é\"x"} {
			got, err := Encode(e, source)
			if err != nil {
				t.Fatal(err)
			}
			ce, err := envelope(e, source)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(ce)
			if string(got) != string(want) {
				t.Errorf("Encode(%s, %q):\n got %s\nwant %s", e.ID, source, got, want)
			}
		}
	}
}
