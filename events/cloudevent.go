// Package events takes the outbox's events out of the process: the
// CloudEvents envelope every receiver gets, and the NATS JetStream sink.
package events

import (
	"encoding/json"
	"fmt"
	"time"

	"storefront/checkout"
)

// DefaultSource is the CloudEvents source of serve's events.
const DefaultSource = "/storefront"

// CloudEvent is a CloudEvents 1.0 event in its structured JSON form
// (https://github.com/cloudevents/spec/blob/v1.0.2/cloudevents/formats/json-format.md).
// Written here rather than with the CloudEvents SDK: the envelope is eight
// attributes, and TestEnvelopeHasTheSpecsAttributes checks them against the
// specification's required and optional ones.
type CloudEvent struct {
	SpecVersion     string          `json:"specversion"`
	ID              string          `json:"id"`
	Source          string          `json:"source"`
	Type            string          `json:"type"`
	Subject         string          `json:"subject,omitempty"`
	Time            string          `json:"time"` // RFC 3339
	DataContentType string          `json:"datacontenttype"`
	Data            json.RawMessage `json:"data"`
}

// ContentType is the media type of a structured CloudEvent over HTTP.
const ContentType = "application/cloudevents+json; charset=utf-8"

// Envelope returns e as a CloudEvent from source: its id is the outbox
// event's id, stable across every re-send (receivers and JetStream
// deduplicate on it), its subject the order's number.
func Envelope(e checkout.Event, source string) (CloudEvent, error) {
	var p struct {
		OrderSn string `json:"orderSn"`
	}
	if err := json.Unmarshal([]byte(e.Payload), &p); err != nil {
		return CloudEvent{}, fmt.Errorf("event %s: payload: %w", e.ID, err)
	}
	return CloudEvent{
		SpecVersion: "1.0", ID: e.ID, Source: source, Type: e.Type, Subject: p.OrderSn,
		Time: e.At.UTC().Format(time.RFC3339Nano), DataContentType: "application/json",
		Data: json.RawMessage(e.Payload),
	}, nil
}

// Encode is Envelope in JSON.
func Encode(e checkout.Event, source string) ([]byte, error) {
	ce, err := Envelope(e, source)
	if err != nil {
		return nil, err
	}
	return json.Marshal(ce)
}
