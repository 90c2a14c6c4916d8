package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coderws "github.com/coder/websocket"

	"storefront/internal/app"
	"storefront/internal/catalog"
	"storefront/internal/demo"
	"storefront/internal/platform/auth"
	"storefront/internal/server"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
)

// liveServer is a real HTTP server with the live hub on a demo catalog.
type liveServer struct {
	url    string // ws://…/graphql
	signer *auth.Signer
	cat    *catalog.Service
	ids    map[string]int64
}

func newLiveServer(t *testing.T, o server.LiveOptions) *liveServer {
	t.Helper()
	db := testdb.Open(t, testdb.SQLite)
	signer, err := auth.NewSigner("websocket-test-secret-0123")
	if err != nil {
		t.Fatal(err)
	}
	cfg := app.DefaultConfig()
	cfg.Live.Interval, cfg.HTTP.Live = 20*time.Millisecond, o
	sf := app.New(db, nil, signer, cfg)
	t.Cleanup(sf.Close)
	cat := sf.Catalog
	ids, err := demo.Seed(context.Background(), cat)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sf.Handler())
	t.Cleanup(ts.Close)
	return &liveServer{url: "ws" + strings.TrimPrefix(ts.URL, "http") + "/graphql", signer: signer, cat: cat, ids: ids}
}

// wsClient speaks graphql-transport-ws, as the npm graphql-ws client does.
type wsClient struct {
	c *coderws.Conn
}

type wsMsg struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func dialWS(ctx context.Context, url string, h http.Header) (*coderws.Conn, *http.Response, error) {
	return coderws.Dial(ctx, url, &coderws.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
}

// connect dials and completes connection_init with payload (nil: none).
func connect(t *testing.T, url string, payload any) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := dialWS(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	w := &wsClient{c: c}
	w.send(t, "", "connection_init", payload)
	if m := w.read(t); m.Type != "connection_ack" {
		t.Fatalf("after connection_init: %+v, want connection_ack", m)
	}
	return w
}

func (w *wsClient) send(t *testing.T, id, typ string, payload any) {
	t.Helper()
	m := map[string]any{"type": typ}
	if id != "" {
		m["id"] = id
	}
	if payload != nil {
		m["payload"] = payload
	}
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, coderws.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// read returns the next message that is not a ping (answered) or pong.
func (w *wsClient) read(t *testing.T) wsMsg {
	t.Helper()
	m, err := w.next()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (w *wsClient) next() (wsMsg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			return wsMsg{}, err
		}
		var m wsMsg
		if err := json.Unmarshal(b, &m); err != nil {
			return wsMsg{}, err
		}
		switch m.Type {
		case "ping":
			_ = w.c.Write(ctx, coderws.MessageText, []byte(`{"type":"pong"}`))
		case "pong":
		default:
			return m, nil
		}
	}
}

const stockSub = `subscription($id: ID!) { goodsStock(goodsId: $id) { goodsId totalStock skus { id availableStock } } }`

func (w *wsClient) subscribe(t *testing.T, id string, goods int64) {
	t.Helper()
	w.send(t, id, "subscribe", map[string]any{"query": stockSub, "variables": map[string]any{"id": fmt.Sprint(goods)}})
}

// errorCode is the code of a "next" with errors or an "error" message.
func errorCode(t *testing.T, m wsMsg) string {
	t.Helper()
	var errs []struct {
		Extensions struct{ Code string }
	}
	switch m.Type {
	case "error":
		_ = json.Unmarshal(m.Payload, &errs)
	case "next":
		var p struct {
			Errors []struct{ Extensions struct{ Code string } }
		}
		_ = json.Unmarshal(m.Payload, &p)
		errs = append(errs, p.Errors...)
	}
	if len(errs) == 0 {
		return ""
	}
	return errs[0].Extensions.Code
}

// A client address may hold MaxConnsPerAddr connections; one more is
// refused with 429 before the upgrade, and a closed one frees its place.
func TestLiveConnectionsPerAddress(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{MaxConnsPerAddr: 3})
	var open []*wsClient
	for range 3 {
		open = append(open, connect(t, s.url, nil))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, resp, err := dialWS(ctx, s.url, nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a 4th connection from one address: %v %+v, want 429 with Retry-After", err, resp)
	}
	open[0].c.Close(coderws.StatusNormalClosure, "")
	// The server notices the close asynchronously: retry until admitted.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, _, err := dialWS(ctx, s.url, nil)
		if err == nil {
			c.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a connection after one closed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The instance holds MaxConns connections whatever their addresses; one
// more, from an address with none open, is refused with 503 and Retry-After
// before the upgrade, and a closed one frees its place.
func TestLiveConnectionsPerInstance(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{MaxConns: 3})
	var open []*wsClient
	for range 3 {
		open = append(open, connect(t, s.url, nil))
	}
	// Another loopback address than the three's (127.0.0.1): the
	// per-address bound cannot be what refuses it.
	other := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}
	hc := &http.Client{Transport: &http.Transport{DialContext: other.DialContext}}
	dial := func(ctx context.Context) (*coderws.Conn, *http.Response, error) {
		return coderws.Dial(ctx, s.url, &coderws.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: hc})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, resp, err := dial(ctx)
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a 4th connection to the instance: %v %+v, want 503 with Retry-After", err, resp)
	}
	metrics := liveMetrics(t, s)
	for _, want := range []string{"storefront_live_connections 3", "storefront_live_connections_max 3",
		`storefront_live_connections_refused_total{limit="instance"} 1`, `storefront_live_connections_refused_total{limit="address"} 0`} {
		if !strings.Contains(metrics, "\n"+want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	open[0].c.Close(coderws.StatusNormalClosure, "")
	// The server notices the close asynchronously: retry until admitted.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, resp, err := dial(ctx)
		if err == nil {
			c.CloseNow()
			break
		}
		if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("a connection after one closed: %v %+v", err, resp)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func liveMetrics(t *testing.T, s *liveServer) string {
	t.Helper()
	resp, err := http.Get("http" + strings.TrimPrefix(strings.TrimSuffix(s.url, "/graphql"), "ws") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The default bound is MaxLiveConnsFor the default memory limit, a quarter
// of it at LiveConnBytes a connection, and grows with the limit.
func TestMaxLiveConnsFor(t *testing.T) {
	if got := server.MaxLiveConnsFor(208 << 20); got != server.DefaultMaxLiveConns {
		t.Errorf("MaxLiveConnsFor(208 MiB) = %d, want DefaultMaxLiveConns %d", got, server.DefaultMaxLiveConns)
	}
	for _, tc := range []struct {
		limit int64
		want  int
	}{{1 << 30, 6553}, {400 << 20, 2560}, {1 << 20, 64}} {
		if got := server.MaxLiveConnsFor(tc.limit); got != tc.want {
			t.Errorf("MaxLiveConnsFor(%d MiB) = %d, want %d", tc.limit>>20, got, tc.want)
		}
	}
}

// A connection runs at most MaxSubscriptionsPerConn subscriptions; one more
// ends at once with RATE_LIMITED, and completing one makes room.
func TestLiveSubscriptionsPerConnection(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{MaxSubscriptionsPerConn: 2})
	bag := s.ids[demo.BagCode]
	w := connect(t, s.url, nil)
	for _, id := range []string{"a", "b"} {
		w.subscribe(t, id, bag)
		if m := w.read(t); m.Type != "next" || m.ID != id || errorCode(t, m) != "" {
			t.Fatalf("subscription %s: %+v", id, m)
		}
	}
	w.subscribe(t, "c", bag)
	if m := w.read(t); m.ID != "c" || errorCode(t, m) != "RATE_LIMITED" {
		t.Fatalf("a third subscription: %+v %s, want RATE_LIMITED", m, m.Payload)
	}
	if m := w.read(t); m.Type != "complete" || m.ID != "c" {
		t.Fatalf("after the refusal: %+v, want complete", m)
	}
	w.send(t, "a", "complete", nil)
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		id := fmt.Sprintf("d%d", i)
		w.subscribe(t, id, bag)
		m := w.read(t)
		if m.Type == "next" && errorCode(t, m) == "" {
			break
		}
		if m.Type == "next" {
			w.read(t) // its complete
		}
		if time.Now().After(deadline) {
			t.Fatalf("no room after completing one: %+v %s", m, m.Payload)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The token comes in connection_init's payload; a bad one closes the
// connection with 4403; an admin's sees off-shelf goods, nobody else does.
func TestLiveTokenInConnectionInit(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{})
	shoe := s.ids[demo.ShoeCode]
	if _, err := s.cat.SetStatus(context.Background(), shoe, enums.GoodsOffShelf); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := dialWS(ctx, s.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	bad := &wsClient{c: c}
	bad.send(t, "", "connection_init", map[string]any{"Authorization": "Bearer not-a-token"})
	for {
		if _, err = bad.next(); err != nil {
			break
		}
	}
	if coderws.CloseStatus(err) != 4403 {
		t.Fatalf("a bad token: %v, want close 4403", err)
	}

	anon := connect(t, s.url, nil)
	anon.subscribe(t, "1", shoe)
	if m := anon.read(t); errorCode(t, m) != "NOT_FOUND" {
		t.Fatalf("anonymous subscription to an off-shelf goods: %+v %s, want NOT_FOUND", m, m.Payload)
	}
	tok, _ := s.signer.Issue("alice", auth.Admin, time.Hour)
	admin := connect(t, s.url, map[string]any{"Authorization": "Bearer " + tok})
	admin.subscribe(t, "1", shoe)
	if m := admin.read(t); m.Type != "next" || errorCode(t, m) != "" {
		t.Fatalf("an admin's subscription to an off-shelf goods: %+v %s", m, m.Payload)
	}
}

// A page of another origin may not connect unless listed; this host's
// pages and clients without Origin may.
func TestLiveOrigins(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{OriginPatterns: []string{"shop.example.com"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host := strings.TrimPrefix(strings.TrimSuffix(s.url, "/graphql"), "ws://")
	for origin, ok := range map[string]bool{"http://evil.example.com": false, "https://shop.example.com": true, "http://" + host: true, "": true} {
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		c, resp, err := dialWS(ctx, s.url, h)
		if ok != (err == nil) {
			t.Errorf("Origin %q: %v, allowed %v", origin, err, ok)
		}
		if !ok && (resp == nil || resp.StatusCode != http.StatusForbidden) {
			t.Errorf("Origin %q: %+v, want 403", origin, resp)
		}
		if c != nil {
			c.CloseNow()
		}
	}
}

// Only subscriptions go over WebSocket; queries and mutations over it are
// refused (POST them), and a subscription over POST too.
func TestLiveOperationKinds(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{})
	w := connect(t, s.url, nil)
	w.send(t, "q", "subscribe", map[string]any{"query": `{ categories { id } }`})
	if m := w.read(t); errorCode(t, m) != "INVALID_INPUT" {
		t.Fatalf("a query over WebSocket: %+v %s, want INVALID_INPUT", m, m.Payload)
	}
	httpURL := "http" + strings.TrimPrefix(s.url, "ws")
	resp, err := http.Post(httpURL, "application/json", strings.NewReader(`{"query":"subscription { goodsStock(goodsId: 1) { totalStock } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Errors []struct{ Extensions struct{ Code string } }
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) == 0 || r.Errors[0].Extensions.Code != "INVALID_INPUT" {
		t.Fatalf("a subscription over POST: %+v %v, want INVALID_INPUT", r, err)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
}

// closed reads until the server closes c and returns the close code and
// reason (-1 if the connection ended without a close frame).
func closed(t *testing.T, c *coderws.Conn) (coderws.StatusCode, string) {
	t.Helper()
	w := &wsClient{c: c}
	for {
		m, err := w.next()
		if err == nil {
			t.Logf("before the close: %+v %s", m, m.Payload)
			continue
		}
		var ce coderws.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Reason
		}
		return -1, err.Error()
	}
}

// dialRaw opens a graphql-transport-ws connection and sends nothing.
func dialRaw(t *testing.T, url string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := dialWS(ctx, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return &wsClient{c: c}
}

func (w *wsClient) raw(t *testing.T, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, coderws.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// Each breach of graphql-transport-ws closes the connection with the code
// the protocol (graphql-ws's PROTOCOL.md) names for it.
func TestLiveCloseCodes(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{InitTimeout: 200 * time.Millisecond})
	bag := fmt.Sprint(s.ids[demo.BagCode])
	sub := func(id string) string {
		b, _ := json.Marshal(map[string]any{"id": id, "type": "subscribe", "payload": map[string]any{"query": stockSub, "variables": map[string]any{"id": bag}}})
		return string(b)
	}
	for _, tc := range []struct {
		name   string
		init   bool     // connection_init first (and its ack read)
		send   []string // then these
		code   coderws.StatusCode
		reason string // contained in the close reason
	}{
		{"not JSON", true, []string{`not json`}, 4400, "Invalid message"},
		{"an unknown type", true, []string{`{"type":"hello"}`}, 4400, "Invalid message"},
		{"a server's type", true, []string{`{"type":"next","id":"1","payload":{}}`}, 4400, "Invalid message"},
		{"subscribe without id", true, []string{`{"type":"subscribe","payload":{"query":"subscription { __typename }"}}`}, 4400, "Invalid message"},
		{"subscribe without query", true, []string{`{"type":"subscribe","id":"1","payload":{}}`}, 4400, "Invalid message"},
		{"complete without id", true, []string{`{"type":"complete"}`}, 4400, "Invalid message"},
		{"init with a payload not an object", false, []string{`{"type":"connection_init","payload":"x"}`}, 4400, "Invalid message"},
		{"not JSON before init", false, []string{`{`}, 4400, "Invalid message"},
		{"subscribe before init", false, []string{sub("1")}, 4401, "Unauthorized"},
		{"init timeout", false, nil, 4408, "Connection initialisation timeout"},
		{"a second init", true, []string{`{"type":"connection_init"}`}, 4429, "Too many initialisation requests"},
		{"a running subscription's id", true, []string{sub("a"), sub("a")}, 4409, "Subscriber for a already exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := dialRaw(t, s.url)
			if tc.init {
				w.raw(t, `{"type":"connection_init"}`)
				if m := w.read(t); m.Type != "connection_ack" {
					t.Fatalf("after connection_init: %+v", m)
				}
			}
			for _, m := range tc.send {
				w.raw(t, m)
			}
			if code, reason := closed(t, w.c); code != tc.code || !strings.Contains(reason, tc.reason) {
				t.Errorf("closed with %d %q, want %d %q", code, reason, tc.code, tc.reason)
			}
		})
	}
}

// What the protocol allows stays allowed: a ping before connection_init is
// answered, and an id is free again once its subscription has ended.
func TestLiveProtocolAllows(t *testing.T) {
	s := newLiveServer(t, server.LiveOptions{})
	bag := s.ids[demo.BagCode]
	w := dialRaw(t, s.url)
	w.raw(t, `{"type":"ping"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, b, err := w.c.Read(ctx); err != nil || !strings.Contains(string(b), `"pong"`) {
		t.Fatalf("a ping before connection_init: %s %v, want a pong", b, err)
	}
	w.raw(t, `{"type":"pong"}`)
	w.send(t, "", "connection_init", nil)
	if m := w.read(t); m.Type != "connection_ack" {
		t.Fatalf("connection_init after a ping: %+v", m)
	}
	for round := range 3 {
		w.subscribe(t, "a", bag)
		if m := w.read(t); m.Type != "next" || m.ID != "a" || errorCode(t, m) != "" {
			t.Fatalf("round %d: subscription a: %+v %s", round, m, m.Payload)
		}
		w.send(t, "a", "complete", nil)
		for {
			m := w.read(t)
			if m.Type == "complete" && m.ID == "a" {
				break
			}
			if m.Type != "next" {
				t.Fatalf("round %d: after completing a: %+v %s", round, m, m.Payload)
			}
		}
	}
}
