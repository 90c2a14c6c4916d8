// Package events takes the outbox's events out of the process: the
// CloudEvents envelope every receiver gets, and the NATS JetStream sink.
package events

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"storefront/internal/checkout"
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
	sn, err := orderSn(e)
	if err != nil {
		return CloudEvent{}, err
	}
	return CloudEvent{
		SpecVersion: "1.0", ID: e.ID, Source: source, Type: e.Type, Subject: sn,
		Time: e.At.UTC().Format(time.RFC3339Nano), DataContentType: "application/json",
		Data: json.RawMessage(e.Payload),
	}, nil
}

// orderSn is the payload's orderSn. checkout's own payloads start with it,
// and are read without a JSON parse; the others (maps, whose keys marshal
// sorted) are parsed.
func orderSn(e checkout.Event) (string, error) {
	const head = `{"orderSn":"`
	if rest, ok := strings.CutPrefix(e.Payload, head); ok {
		if i := strings.IndexByte(rest, '"'); i > 0 && plain(rest[:i]) {
			return rest[:i], nil
		}
	}
	var p struct {
		OrderSn string `json:"orderSn"`
	}
	if err := json.Unmarshal([]byte(e.Payload), &p); err != nil {
		return "", fmt.Errorf("event %s: payload: %w", e.ID, err)
	}
	return p.OrderSn, nil
}

// Encode is Envelope in JSON, written by hand: json.Marshal validates and
// compacts the payload (a RawMessage) again, which showed in the
// dispatcher's profile; the payload is the outbox's, written by
// json.Marshal in the transaction that committed it. The output is the
// same as json.Marshal(Envelope(e, source)) (TestEncodeIsMarshal).
func Encode(e checkout.Event, source string) ([]byte, error) {
	sn, err := orderSn(e)
	if err != nil {
		return nil, err
	}
	if !json.Valid([]byte(e.Payload)) {
		return nil, fmt.Errorf("event %s: payload is not JSON", e.ID)
	}
	b := make([]byte, 0, 200+len(e.Payload))
	b = append(b, `{"specversion":"1.0","id":`...)
	b = appendString(b, e.ID)
	b = append(b, `,"source":`...)
	b = appendString(b, source)
	b = append(b, `,"type":`...)
	b = appendString(b, e.Type)
	if sn != "" {
		b = append(b, `,"subject":`...)
		b = appendString(b, sn)
	}
	b = append(b, `,"time":"`...)
	b = e.At.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","datacontenttype":"application/json","data":`...)
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
