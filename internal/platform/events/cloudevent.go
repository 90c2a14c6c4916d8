// Package events takes the outbox's events out of the process: the
// CloudEvents envelope every receiver gets, and the NATS JetStream sink.
// It knows no domain: an event's subject is its aggregate's id.
package events

import (
	"encoding/json"
	"fmt"
	"time"

	"storefront/internal/platform/outbox"
)

// DefaultSource is the CloudEvents source of serve's events.
const DefaultSource = "/storefront"

// CloudEvent is a CloudEvents 1.0 event in its structured JSON form
// (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md).
// Written here rather than with the CloudEvents SDK: the envelope is eight
// attributes, and TestEnvelopeHasTheSpecsAttributes checks them against the
// specification's required and optional ones.
type CloudEvent struct {
	SpecVersion     string `json:"specversion"`
	ID              string `json:"id"`
	Source          string `json:"source"`
	Type            string `json:"type"`
	Subject         string `json:"subject,omitempty"`
	Time            string `json:"time"` // RFC 3339
	DataContentType string `json:"datacontenttype"`
	// Traceparent is the distributed-tracing extension
	// (cloudevents/spec extensions/distributed-tracing.md): the W3C
	// traceparent of the change that raised the event, when tracing was on.
	Traceparent string          `json:"traceparent,omitempty"`
	Data        json.RawMessage `json:"data"`
}

// ContentType is the media type of a structured CloudEvent over HTTP.
const ContentType = "application/cloudevents+json; charset=utf-8"

// envelope returns e as a CloudEvent from source: its id is the outbox
// event's id, stable across every re-send (receivers and JetStream
// deduplicate on it), its subject the id of the aggregate it is about (an
// order's orderSn; none when the event names none).
func envelope(e outbox.Event, source string) (CloudEvent, error) {
	if !json.Valid([]byte(e.Payload)) {
		return CloudEvent{}, notJSON(e)
	}
	return CloudEvent{
		SpecVersion: "1.0", ID: e.ID, Source: source, Type: e.Type, Subject: e.Aggregate.ID,
		Time: e.At.UTC().Format(time.RFC3339Nano), DataContentType: "application/json",
		Traceparent: e.Trace, Data: json.RawMessage(e.Payload),
	}, nil
}

func notJSON(e outbox.Event) error { return fmt.Errorf("event %s: payload is not JSON", e.ID) }

// Encode is envelope in JSON, written by hand: json.Marshal validates and
// compacts the payload (a RawMessage) again, which showed in the
// dispatcher's profile; the payload is the outbox's, written by
// json.Marshal in the transaction that committed it. The output is the
// same as json.Marshal(envelope(e, source)) (TestEncodeIsMarshal).
func Encode(e outbox.Event, source string) ([]byte, error) {
	if !json.Valid([]byte(e.Payload)) {
		return nil, notJSON(e)
	}
	b := make([]byte, 0, 200+len(e.Payload))
	b = append(b, `{"specversion":"1.0","id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"source":`...)
	b = appendString(b, source)
	b = append(b, `,"type":`...)
	b = appendString(b, e.Type)
	if sn := e.Aggregate.ID; sn != "" {
		b = append(b, `,"subject":`...)
		b = appendString(b, sn)
	}
	b = append(b, `,"time":"`...)
	b = e.At.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","datacontenttype":"application/json"`...)
	if e.Trace != "" {
		b = append(b, `,"traceparent":`...)
		b = appendString(b, e.Trace)
	}
	b = append(b, `,"data":`...)
	b = append(b, e.Payload...)
	return append(b, '}'), nil
}

// appendString appends s as a JSON string: as it is when nothing in it
// needs escaping, else as encoding/json writes it.
func appendString(b []byte, s string) []byte {
	if plain(s) {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	q, _ := json.Marshal(s)
	return append(b, q...)
}

// plain: printable ASCII without the characters JSON (or encoding/json's
// HTML-safe escaping) would escape.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
