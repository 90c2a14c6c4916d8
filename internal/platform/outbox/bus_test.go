package outbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"storefront/ent"
	entoutbox "storefront/ent/outbox"
	"storefront/internal/platform/events"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
	"storefront/internal/webhooks"
)

// A domain that is not checkout's (here "test", standing for shipments,
// coupons, after-sales) announces its changes through the outbox alone:
// an event written with outbox.Emit, and a row of several written with
// outbox.Many, each inside the domain's own transaction, reach NATS
// JetStream and a webhook subscribed to their type, each event once, as
// CloudEvents whose subject is its aggregate's id (each event of the row
// of several its own). A transaction that rolls back emits nothing: its
// event is neither in the outbox nor sent.
func TestAnyDomainsEventsReachTheBrokerAndTheWebhooks(t *testing.T) {
	url := natsURL(t)
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		const happened, undone = "TestHappened", "TestUndone"

		// The webhooks offer the test domain's types (serve gives them
		// checkout's), and one endpoint subscribes to both.
		rcv := newReceiver(t)
		hooks := webhooks.New(db, webhooks.Config{EventTypes: []string{happened, undone}, AllowPrivate: true, Interval: 20 * time.Millisecond})
		if _, _, err := hooks.Create(ctx, rcv.URL, []string{happened, undone}, ""); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		defer wg.Wait()
		defer cancel()
		wg.Go(func() { hooks.Run(ctx) })

		stream, prefix := uniq()
		broker, err := events.Connect(ctx, events.NATSConfig{URL: url, Stream: stream, SubjectPrefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		defer broker.Close()
		js := jetStream(t, url)
		defer func() { _ = js.DeleteStream(context.Background(), stream) }()

		// The domain's transactions: one event; a row of three; one rolled back.
		at := time.Now()
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			return outbox.Emit(ctx, tx, outbox.Aggregate{Type: "test", ID: "t-42"}, happened, map[string]int{"n": 42}, at)
		}); err != nil {
			t.Fatal(err)
		}
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			r, err := outbox.Many("test", happened, at, 3, func(i int) (string, []byte, error) {
				return fmt.Sprint("t-", i), fmt.Appendf(nil, `{"n":%d}`, i), nil
			}, nil)
			if err != nil {
				return err
			}
			return outbox.Insert(ctx, tx, r)
		}); err != nil {
			t.Fatal(err)
		}
		rollback := errors.New("the domain's change failed")
		if err := store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
			if err := outbox.Emit(ctx, tx, outbox.Aggregate{Type: "test", ID: "t-undone"}, undone, map[string]int{"n": -1}, at); err != nil {
				return err
			}
			return rollback
		}); !errors.Is(err, rollback) {
			t.Fatalf("the rolled-back transaction: %v", err)
		}
		if n := db.Client.Outbox.Query().Where(entoutbox.AggregateID("t-undone")).CountX(ctx); n != 0 {
			t.Errorf("%d outbox rows of the rolled-back transaction, want none", n)
		}

		// Both lanes, as serve runs them.
		d := outbox.New(db, outbox.Config{Instance: "bus"})
		if _, err := d.DrainLane(ctx, outbox.LaneBroker, broker.Sink(), 10); err != nil {
			t.Fatal(err)
		}
		if _, err := d.DrainLane(ctx, outbox.LaneWebhooks, hooks.Sink(), 10); err != nil {
			t.Fatal(err)
		}
		want := []string{"t-0", "t-1", "t-2", "t-42"} // each event's subject

		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var onNATS []string
		for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if err != nil {
				t.Fatal(err)
			}
			ce := cloudEvent(t, m.Data)
			if m.Subject != prefix+"."+happened || ce.Type != happened || m.Header.Get(jetstream.MsgIDHeader) != ce.ID {
				t.Errorf("NATS message %d on %s (Nats-Msg-Id %s): %s", seq, m.Subject, m.Header.Get(jetstream.MsgIDHeader), m.Data)
			}
			onNATS = append(onNATS, ce.Subject)
		}
		slices.Sort(onNATS)
		if fmt.Sprint(onNATS) != fmt.Sprint(want) {
			t.Errorf("NATS subjects %v, want %v", onNATS, want)
		}

		wait.For(t, "the webhook to receive 4 events", func() bool { return len(rcv.subjects()) >= len(want) })
		if got := rcv.subjects(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("webhook subjects %v, want %v", got, want)
		}
		for _, b := range rcv.bad() {
			t.Error(b)
		}
		for _, lane := range outbox.Lanes {
			if n, _, err := d.LaneBacklog(ctx, lane); n != 0 || err != nil {
				t.Errorf("%s lane: %d events wait, %v", lane, n, err)
			}
		}
	})
}

// receiver is a webhook endpoint that keeps the CloudEvents it is sent.
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  map[string]string // event id → subject
	errs []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{got: map[string]string{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var ce events.CloudEvent
		err := json.Unmarshal(b, &ce)
		r.mu.Lock()
		defer r.mu.Unlock()
		switch {
		case err != nil:
			r.errs = append(r.errs, fmt.Sprintf("webhook body %s: %v", b, err))
		case req.Header.Get("webhook-id") != ce.ID || ce.Type != "TestHappened":
			r.errs = append(r.errs, fmt.Sprintf("webhook request webhook-id %q: %s", req.Header.Get("webhook-id"), b))
		case r.got[ce.ID] != "":
			r.errs = append(r.errs, "event "+ce.ID+" received twice")
		}
		if err == nil {
			r.got[ce.ID] = ce.Subject
		}
	}))
	t.Cleanup(r.Close)
	return r
}

// subjects are the subjects of the events received, sorted.
func (r *receiver) subjects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, s := range r.got {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func (r *receiver) bad() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errs)
}

func cloudEvent(t *testing.T, b []byte) events.CloudEvent {
	t.Helper()
	var ce events.CloudEvent
	if err := json.Unmarshal(b, &ce); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return ce
}

// natsURL is the test NATS server's (STOREFRONT_TEST_NATS_URL).
func natsURL(t *testing.T) string {
	t.Helper()
	url := os.Getenv("STOREFRONT_TEST_NATS_URL")
	if url == "" {
		if os.Getenv("STOREFRONT_TEST_REQUIRE_NATS") == "1" {
			t.Fatal("STOREFRONT_TEST_NATS_URL is not set and STOREFRONT_TEST_REQUIRE_NATS=1")
		}
		t.Skip("STOREFRONT_TEST_NATS_URL not set: skipping the NATS JetStream tests")
	}
	return url
}

func jetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// uniq is a stream and subject prefix of this test's own.
func uniq() (stream, prefix string) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	return "T_" + strings.ToUpper(tag), "t." + tag
}
