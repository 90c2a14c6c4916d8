package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// Close codes of graphql-transport-ws (the npm graphql-ws package's
// PROTOCOL.md). gqlgen closes every protocol error with 1002, reads a
// second connection_init or a subscribe before it as "unexpected", and runs
// two subscriptions under one id; protocolGuard gives each case the code
// the protocol names, so that a graphql-ws client reports (and, for 4408
// and 4429, retries) as it is written to.
const (
	closeBadRequest        = 4400
	closeUnauthorized      = 4401
	closeInitTimeout       = 4408
	closeSubscriberExists  = 4409
	closeTooManyInitialise = 4429
)

// protocolGuard accepts connections as coder/websocket does for gqlgen and
// watches the messages of graphql-transport-ws connections (docs/live.md).
type protocolGuard struct {
	transport.CoderWebsocketImplementation
}

func (g protocolGuard) Accept(w http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := g.CoderWebsocketImplementation.Accept(w, r, o)
	if err != nil || c.Subprotocol() != "graphql-transport-ws" {
		return c, err
	}
	return &guardedConn{WebsocketConn: c}, nil
}

// guardedConn checks each message a client sends before gqlgen reads it and
// closes the connection with the protocol's code when one breaks the
// protocol. It sees the connection's messages in order: gqlgen reads one at
// a time, and reads the one after connection_init only once it has
// acknowledged it.
type guardedConn struct {
	transport.WebsocketConn
	mu     sync.Mutex
	inited bool
	// running are the ids of subscriptions from their subscribe to the
	// server's complete or error: gqlgen keeps an id's subscription until
	// then, and a second one under it would replace it there.
	running map[string]struct{}
}

func (c *guardedConn) NextReader() (int, io.Reader, error) {
	for {
		typ, r, err := c.WebsocketConn.NextReader()
		if err != nil {
			return typ, r, err
		}
		data, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		pass, code, reason := c.check(data)
		if code != 0 {
			_ = c.WebsocketConn.WriteClose(code, closeReason(reason))
			// gqlgen reports no error for a connection closed this way.
			return typ, nil, fmt.Errorf("%w: %d %s", transport.ErrWebsocketClosed, code, reason)
		}
		if pass {
			return typ, bytes.NewReader(data), nil
		}
	}
}

type clientMessage struct {
	Type    string          `json:"type"`
	ID      *string         `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// check says whether gqlgen gets the message, or the close code and reason
// that end the connection instead (0: none). Before connection_init, a ping
// is answered here and a pong or a complete ignored: gqlgen would take any
// of them for a broken init.
func (c *guardedConn) check(data []byte) (pass bool, code int, reason string) {
	var m clientMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return false, closeBadRequest, "Invalid message received: not a JSON object with a string type"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m.Type {
	case "connection_init", "ping", "pong":
		if !objectOrNull(m.Payload) {
			return false, closeBadRequest, fmt.Sprintf("Invalid message received: %s's payload is not an object", m.Type)
		}
		switch {
		case m.Type == "connection_init" && c.inited:
			return false, closeTooManyInitialise, "Too many initialisation requests"
		case m.Type == "connection_init":
			c.inited = true
		case m.Type == "ping" && !c.inited:
			_ = c.WebsocketConn.WriteJSON(map[string]string{"type": "pong"})
			return false, 0, ""
		case !c.inited:
			return false, 0, ""
		}
		return true, 0, ""
	case "subscribe":
		var p struct {
			Query *string `json:"query"`
		}
		if m.ID == nil || *m.ID == "" || json.Unmarshal(m.Payload, &p) != nil || p.Query == nil {
			return false, closeBadRequest, "Invalid message received: subscribe needs an id and a payload with a query"
		}
		if !c.inited {
			return false, closeUnauthorized, "Unauthorized"
		}
		if _, ok := c.running[*m.ID]; ok {
			return false, closeSubscriberExists, "Subscriber for " + *m.ID + " already exists"
		}
		if c.running == nil {
			c.running = map[string]struct{}{}
		}
		c.running[*m.ID] = struct{}{}
		return true, 0, ""
	case "complete":
		if m.ID == nil || *m.ID == "" {
			return false, closeBadRequest, "Invalid message received: complete needs an id"
		}
		return c.inited, 0, ""
	default:
		return false, closeBadRequest, fmt.Sprintf("Invalid message received: unexpected type %.40q", m.Type)
	}
}

// WriteJSON frees a subscription's id as the server ends it, before the
// client can read the end and reuse the id.
func (c *guardedConn) WriteJSON(v any) error {
	if rv := reflect.Indirect(reflect.ValueOf(v)); rv.Kind() == reflect.Struct {
		t, id := rv.FieldByName("Type"), rv.FieldByName("ID")
		if t.Kind() == reflect.String && id.Kind() == reflect.String && (t.String() == "complete" || t.String() == "error") {
			c.mu.Lock()
			delete(c.running, id.String())
			c.mu.Unlock()
		}
	}
	return c.WebsocketConn.WriteJSON(v)
}

// WriteClose gives gqlgen's init timeout (1002) the protocol's code.
func (c *guardedConn) WriteClose(code int, reason string) error {
	if code == transport.WebsocketCloseProtocolError && reason == "connection initialisation timeout" {
		code, reason = closeInitTimeout, "Connection initialisation timeout"
	}
	return c.WebsocketConn.WriteClose(code, reason)
}

// gqlgen enforces the read limit and the pong deadline through these.
func (c *guardedConn) SetReadLimit(n int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (c *guardedConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}

// closeReason fits reason in a close frame (123 bytes, RFC 6455 5.5.1).
func closeReason(reason string) string {
	for len(reason) > 123 {
		_, n := utf8.DecodeLastRuneInString(reason)
		reason = reason[:len(reason)-n]
	}
	return reason
}
