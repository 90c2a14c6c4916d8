package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"storefront/internal/platform/events"
	"storefront/internal/webhooks"
)

// The NATS server the event tests publish to (JetStream on): locally they
// skip without it; with STOREFRONT_TEST_REQUIRE_NATS=1 (CI) its absence is
// a failure.
const (
	natsEnv        = "STOREFRONT_TEST_NATS_URL"
	natsRequireEnv = "STOREFRONT_TEST_REQUIRE_NATS"
)

func natsURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(natsEnv)
	if u == "" {
		if os.Getenv(natsRequireEnv) == "1" {
			t.Fatalf("%s is not set and %s=1: the NATS tests must run", natsEnv, natsRequireEnv)
		}
		t.Skipf("%s not set: skipping the NATS JetStream tests (set it to nats://127.0.0.1:4222)", natsEnv)
	}
	return u
}

// eventStream is a stream of the test's own on a NATS server: a unique
// name and subject prefix, deleted at the end.
type eventStream struct {
	Name, Prefix string
	nc           *nats.Conn
	js           jetstream.JetStream
}

func newEventStream(t *testing.T, url string) *eventStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatalf("connecting to NATS at %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	s := &eventStream{Name: "E2E_" + strings.ToUpper(tag), Prefix: "e2e." + tag, nc: nc, js: js}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = js.DeleteStream(ctx, s.Name)
	})
	return s
}

// args are serve's flags for publishing to s.
func (s *eventStream) args(url string) []string {
	return []string{"--events-nats", url, "--events-stream", s.Name, "--events-subject-prefix", s.Prefix}
}

// storedEvent is one message of the stream, decoded.
type storedEvent struct {
	Seq     uint64
	Subject string
	MsgID   string
	CE      events.CloudEvent
	OrderSn string // data.orderSn
}

// count is how many messages the stream holds (0 before serve made it).
func (s *eventStream) count(t *testing.T) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := s.js.Stream(ctx, s.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0
	}
	if err != nil {
		t.Fatalf("stream %s: %v", s.Name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s: %v", s.Name, err)
	}
	return int(info.State.Msgs)
}

// all reads every message of the stream and checks each is a valid
// CloudEvent whose id is its Nats-Msg-Id, on <prefix>.<type>.
func (s *eventStream) all(t *testing.T) []storedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := s.js.Stream(ctx, s.Name)
	if err != nil {
		t.Fatalf("stream %s: %v", s.Name, err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedEvent
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			t.Fatalf("message %d: %v", seq, err)
		}
		e := storedEvent{Seq: seq, Subject: m.Subject, MsgID: m.Header.Get("Nats-Msg-Id")}
		if err := checkCloudEvent(m.Data, &e.CE, &e.OrderSn); err != nil {
			t.Errorf("message %d on %s: %v: %s", seq, m.Subject, err, m.Data)
			continue
		}
		if e.CE.ID != e.MsgID {
			t.Errorf("message %d: id %q, Nats-Msg-Id %q", seq, e.CE.ID, e.MsgID)
		}
		if e.Subject != s.Prefix+"."+e.CE.Type {
			t.Errorf("message %d: subject %q for type %s", seq, e.Subject, e.CE.Type)
		}
		out = append(out, e)
	}
	return out
}

// checkCloudEvent decodes a structured CloudEvent and checks the
// attributes the envelope promises (API-CONVENTIONS.md).
func checkCloudEvent(b []byte, ce *events.CloudEvent, orderSn *string) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	for _, k := range []string{"specversion", "id", "source", "type", "subject", "time", "datacontenttype", "data"} {
		if _, ok := raw[k]; !ok {
			return errors.New("no attribute " + k)
		}
	}
	if err := json.Unmarshal(b, ce); err != nil {
		return err
	}
	var d struct{ OrderSn string }
	if err := json.Unmarshal(ce.Data, &d); err != nil {
		return err
	}
	*orderSn = d.OrderSn
	switch {
	case ce.SpecVersion != "1.0":
		return errors.New("specversion " + ce.SpecVersion)
	case ce.ID == "" || ce.Source == "" || ce.Type == "":
		return errors.New("empty id, source or type")
	case ce.DataContentType != "application/json":
		return errors.New("datacontenttype " + ce.DataContentType)
	case ce.Subject == "" || ce.Subject != d.OrderSn:
		return errors.New("subject " + ce.Subject + " is not data.orderSn " + d.OrderSn)
	}
	if _, err := time.Parse(time.RFC3339Nano, ce.Time); err != nil {
		return err
	}
	return nil
}

// receiver is a webhook endpoint on loopback that verifies every request's
// signature and records what it got.
type receiver struct {
	URL    string
	secret string
	// refuse, when set, answers 500 to the first attempt of the events it
	// picks.
	refuse func(id string) bool
	// hang, when set, holds every request this long before answering.
	hang time.Duration
	// gate, when set, holds every request until it is closed; a request
	// whose sender went away meanwhile (killed) is not counted.
	gate chan struct{}

	mu       sync.Mutex
	got      map[string]int // event id → 2xx answers given
	refused  map[string]bool
	types    map[string]string // event id → type
	traces   map[string]string // event id → the traceparent header of its last 2xx attempt
	bad      []string
	answered int // requests answered, of any status
	arrived  int // requests received (hanging ones included)
	quit     chan struct{}
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	r := &receiver{got: map[string]int{}, refused: map[string]bool{}, types: map[string]string{}, traces: map[string]string{}, quit: make(chan struct{})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: r}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(r.quit); _ = srv.Close() })
	r.URL = "http://" + ln.Addr().String() + "/hook"
	return r
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.arrived++
	r.mu.Unlock()
	if r.hang > 0 {
		select {
		case <-time.After(r.hang):
		case <-req.Context().Done():
		case <-r.quit:
		}
	}
	if r.gate != nil {
		select {
		case <-r.gate:
		case <-req.Context().Done():
		case <-r.quit:
		}
		if req.Context().Err() != nil {
			return // nobody hears the answer: not delivered
		}
	}
	id := req.Header.Get("webhook-id")
	ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answered++
	var ce events.CloudEvent
	var sn string
	switch {
	case !webhooks.Verify(r.secret, id, ts, body, req.Header.Get("webhook-signature")):
		r.bad = append(r.bad, "bad signature on "+id)
		w.WriteHeader(401)
		return
	case checkCloudEvent(body, &ce, &sn) != nil || ce.ID != id:
		r.bad = append(r.bad, "bad CloudEvent "+string(body))
		w.WriteHeader(400)
		return
	case time.Since(time.Unix(ts, 0)).Abs() > 5*time.Minute:
		r.bad = append(r.bad, "stale timestamp on "+id)
	}
	if r.refuse != nil && !r.refused[id] && r.refuse(id) {
		r.refused[id] = true
		w.WriteHeader(500)
		return
	}
	r.got[id]++
	r.types[id] = ce.Type
	r.traces[id] = req.Header.Get("traceparent")
	w.WriteHeader(204)
}

func (r *receiver) counts() (arrived, answered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrived, r.answered
}

func (r *receiver) snapshot() (got map[string]int, refused map[string]bool, bad []string, answered int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got = make(map[string]int, len(r.got))
	for k, v := range r.got {
		got[k] = v
	}
	refused = make(map[string]bool, len(r.refused))
	for k, v := range r.refused {
		refused[k] = v
	}
	return got, refused, append([]string(nil), r.bad...), r.answered
}

const createWebhook = `mutation($in: CreateWebhookInput!) { createWebhook(input: $in) { webhook { id url events active createdAt } secret } }`

// subscribe registers r for types through s and keeps its secret.
func (r *receiver) subscribe(t *testing.T, s *Server, types ...string) string {
	t.Helper()
	var c struct {
		CreateWebhook struct {
			Webhook struct {
				ID     string
				Events []string
				Active bool
			}
			Secret string
		}
	}
	decode(t, s.Query(t, s.AdminToken, createWebhook, map[string]any{"in": map[string]any{"url": r.URL, "events": types, "description": "e2e"}}), &c)
	if !strings.HasPrefix(c.CreateWebhook.Secret, "whsec_") || !c.CreateWebhook.Webhook.Active {
		t.Fatalf("createWebhook: %+v", c.CreateWebhook)
	}
	r.mu.Lock()
	r.secret = c.CreateWebhook.Secret
	r.mu.Unlock()
	return c.CreateWebhook.Webhook.ID
}

// delivery is one attempt as webhookDeliveries shows it.
type delivery struct {
	EventID, EventType, Status, Error string
	Attempt                           int
	HTTPStatus                        *int
	At                                string
	NextAttemptAt                     *string
}

// deliveries pages through webhookDeliveries of webhook id.
func deliveries(t *testing.T, s *Server, id string) []delivery {
	t.Helper()
	var out []delivery
	after := ""
	for {
		var c struct {
			WebhookDeliveries struct {
				Edges []struct {
					Node delivery
				}
				PageInfo struct {
					HasNextPage bool
					EndCursor   string
				}
			}
		}
		vars := map[string]any{"id": id, "first": 100}
		if after != "" {
			vars["after"] = after
		}
		decode(t, s.Query(t, s.AdminToken, `query($id: ID!, $first: Int, $after: String) { webhookDeliveries(webhookId: $id, first: $first, after: $after) {
			edges { node { eventId eventType attempt status httpStatus error at nextAttemptAt } } pageInfo { hasNextPage endCursor } } }`, vars), &c)
		for _, e := range c.WebhookDeliveries.Edges {
			out = append(out, e.Node)
		}
		if !c.WebhookDeliveries.PageInfo.HasNextPage {
			return out
		}
		after = c.WebhookDeliveries.PageInfo.EndCursor
	}
}
