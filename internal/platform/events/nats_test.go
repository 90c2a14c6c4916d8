package events

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"storefront/internal/platform/outbox"
)

func testNATS(t *testing.T) (string, jetstream.JetStream) {
	t.Helper()
	url := os.Getenv("STOREFRONT_TEST_NATS_URL")
	if url == "" {
		if os.Getenv("STOREFRONT_TEST_REQUIRE_NATS") == "1" {
			t.Fatal("STOREFRONT_TEST_NATS_URL is not set and STOREFRONT_TEST_REQUIRE_NATS=1")
		}
		t.Skip("STOREFRONT_TEST_NATS_URL not set: skipping the NATS JetStream tests")
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return url, js
}

func uniq(t *testing.T, js jetstream.JetStream) (stream, prefix string) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	tag := hex.EncodeToString(b[:])
	stream, prefix = "T_"+strings.ToUpper(tag), "t."+tag
	t.Cleanup(func() { _ = js.DeleteStream(context.Background(), stream) })
	return stream, prefix
}

// Connect creates a missing stream as the issue says (subjects P.>, file
// storage, duplicate window ≥ 2 min); publishing the same event twice
// stores it once (Nats-Msg-Id = id), on P.<type>.
func TestConnectCreatesTheStreamAndDeduplicates(t *testing.T) {
	url, js := testNATS(t)
	ctx := context.Background()
	stream, prefix := uniq(t, js)
	n, err := Connect(ctx, NATSConfig{URL: url, Stream: stream, SubjectPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatalf("stream not created: %v", err)
	}
	cfg := s.CachedInfo().Config
	if len(cfg.Subjects) != 1 || cfg.Subjects[0] != prefix+".>" || cfg.Storage != jetstream.FileStorage || cfg.Duplicates < 2*time.Minute {
		t.Errorf("stream config: subjects %v, storage %v, duplicates %v", cfg.Subjects, cfg.Storage, cfg.Duplicates)
	}
	e := outbox.Event{ID: "9d3c2b1a-0000-4000-8000-000000000001", Type: "OrderPlaced", Aggregate: outbox.Aggregate{Type: "order", ID: "sn-1"}, Payload: `{"orderSn":"sn-1"}`, At: time.Now()}
	for range 2 {
		if k, err := n.Sink()(ctx, []outbox.Event{e}); k != 1 || err != nil {
			t.Fatalf("Sink = %d, %v", k, err)
		}
	}
	info, _ := s.Info(ctx)
	if info.State.Msgs != 1 {
		t.Fatalf("stream holds %d messages after publishing one event twice, want 1", info.State.Msgs)
	}
	m, err := s.GetMsg(ctx, info.State.FirstSeq)
	if err != nil {
		t.Fatal(err)
	}
	if m.Subject != prefix+".OrderPlaced" || m.Header.Get("Nats-Msg-Id") != e.ID {
		t.Errorf("message on %s with Nats-Msg-Id %q", m.Subject, m.Header.Get("Nats-Msg-Id"))
	}
	// A second start finds the stream and takes it as it is.
	n2, err := Connect(ctx, NATSConfig{URL: url, Stream: stream, SubjectPrefix: prefix})
	if err != nil {
		t.Fatalf("second Connect: %v", err)
	}
	n2.Close()
}

// A stream that exists and does not take P.> stops serve at start.
func TestConnectRefusesAConflictingStream(t *testing.T) {
	url, js := testNATS(t)
	ctx := context.Background()
	stream, prefix := uniq(t, js)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{prefix + ".other.>"}, Storage: jetstream.MemoryStorage}); err != nil {
		t.Fatal(err)
	}
	_, err := Connect(ctx, NATSConfig{URL: url, Stream: stream, SubjectPrefix: prefix + ".events"})
	if !errors.Is(err, ErrStreamConflict) || !strings.Contains(err.Error(), stream) {
		t.Fatalf("Connect to a stream of other subjects: %v, want ErrStreamConflict naming the stream", err)
	}
}

// A stream deleted while serve runs (an operator's mistake, a cluster
// rebuilt) is made again by the sink: the next events are published to
// the new stream, with no restart. Before, the sink remembered that the
// stream existed and every publish failed from then on ("no response from
// stream"), holding the events in the outbox forever.
func TestSinkMakesADeletedStreamAgain(t *testing.T) {
	url, js := testNATS(t)
	ctx := context.Background()
	stream, prefix := uniq(t, js)
	n, err := Connect(ctx, NATSConfig{URL: url, Stream: stream, SubjectPrefix: prefix, AckTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	ev := func(i int) outbox.Event {
		return outbox.Event{ID: fmt.Sprintf("9d3c2b1a-0000-4000-8000-%012d", i), Type: "OrderPaid",
			Payload: fmt.Sprintf(`{"orderSn":"sn-%d"}`, i), At: time.Now()}
	}
	if k, err := n.Sink()(ctx, []outbox.Event{ev(1)}); k != 1 || err != nil {
		t.Fatalf("Sink before the deletion = %d, %v", k, err)
	}
	for round := 2; round <= 3; round++ { // deleted twice: each time made again
		if err := js.DeleteStream(ctx, stream); err != nil {
			t.Fatal(err)
		}
		batch := []outbox.Event{ev(10 * round), ev(10*round + 1), ev(10*round + 2)}
		if k, err := n.Sink()(ctx, batch); k != len(batch) || err != nil {
			t.Fatalf("round %d: Sink after the stream was deleted = %d, %v; want %d, nil", round, k, err, len(batch))
		}
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatalf("round %d: the stream was not made again: %v", round, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cfg := info.Config
		if info.State.Msgs != uint64(len(batch)) || len(cfg.Subjects) != 1 || cfg.Subjects[0] != prefix+".>" || cfg.Duplicates < DuplicateWindow {
			t.Errorf("round %d: the new stream holds %d messages (want %d), subjects %v, duplicates %v", round, info.State.Msgs, len(batch), cfg.Subjects, cfg.Duplicates)
		}
	}
}
