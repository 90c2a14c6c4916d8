package webhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// hookServer counts requests per webhook-id, verifies signatures, and
// notes any id that arrives while an earlier request of it is in flight.
type hookServer struct {
	*httptest.Server
	secret   string
	status   int
	refuse   map[string]int // webhook-id → how many of its first requests get 500
	answer   map[string]int // webhook-id → the status it gets instead of status
	mu       sync.Mutex
	inflight map[string]bool
	got      map[string]int
	bad      []string
	cur, max int // requests in flight now, and at most
}

func newHookServer(t *testing.T, status int) *hookServer {
	h := &hookServer{status: status, inflight: map[string]bool{}, got: map[string]int{}, refuse: map[string]int{}, answer: map[string]int{}}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("webhook-id")
		ts, _ := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64)
		var body [4096]byte
		n, _ := r.Body.Read(body[:])
		h.mu.Lock()
		if h.inflight[id] {
			h.bad = append(h.bad, "attempt of "+id+" sent while another was in flight")
		}
		if !Verify(h.secret, id, ts, body[:n], r.Header.Get("webhook-signature")) {
			h.bad = append(h.bad, "bad signature on "+id)
		}
		var ce struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(body[:n], &ce); err != nil || ce.ID != id {
			h.bad = append(h.bad, fmt.Sprintf("webhook-id %s on a body whose id is %q (%v)", id, ce.ID, err))
		}
		h.inflight[id] = true
		h.got[id]++
		h.cur++
		h.max = max(h.max, h.cur)
		h.mu.Unlock()
		time.Sleep(2 * time.Millisecond)
		h.mu.Lock()
		h.cur--
		delete(h.inflight, id)
		status := h.status
		if c, ok := h.answer[id]; ok {
			status = c
		}
		if h.refuse[id] > 0 {
			h.refuse[id]--
			status = 500
		}
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.Close)
	return h
}

func (h *hookServer) count() (ids, requests int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, n := range h.got {
		requests += n
	}
	return len(h.got), requests
}

func evs(n int) []outbox.Event {
	out := make([]outbox.Event, n)
	for i := range out {
		out[i] = outbox.Event{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Type: orderPaid,
			Payload: fmt.Sprintf(`{"orderSn":"sn-%d"}`, i), At: time.Now()}
	}
	return out
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Two instances' senders over one database: every attempt is claimed by
// one of them, so each of 200 events reaches the endpoint once and never
// twice at a time; a repeat of the events (the dispatcher's at least once)
// queues nothing again.
func TestTwoSendersNeverSendTheSameAttempt(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		cfg := Config{EventTypes: eventTypes, AllowPrivate: true, PerWebhook: 8, Interval: 20 * time.Millisecond}
		a, b := New(db, cfg), New(db, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, secret, err := a.Create(ctx, h.URL, []string{orderPaid}, "test")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := evs(200)
		for range 2 {
			if n, err := a.Sink()(ctx, es); n != len(es) || err != nil {
				t.Fatalf("Sink = %d, %v", n, err)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { a.Run(ctx) })
		wg.Go(func() { b.Run(ctx) })
		waitUntil(t, "200 events delivered", func() bool { ids, _ := h.count(); return ids == 200 })
		waitUntil(t, "every attempt recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 200
		})
		cancel()
		wg.Wait()
		_, requests := h.count()
		if requests != 200 {
			t.Errorf("%d requests for 200 events, want 200", requests)
		}
		for _, b := range h.bad {
			t.Error(b)
		}
		var delivered int
		if err := db.SQL.QueryRow("SELECT COUNT(*) FROM webhook_delivery WHERE status = 'DELIVERED' AND attempt = 1").Scan(&delivered); err != nil || delivered != 200 {
			t.Errorf("DELIVERED first attempts: %d (%v), want 200", delivered, err)
		}
	})
}

// An endpoint that always fails gets the first attempt and one per step of
// the schedule, then the delivery is FAILED with no next attempt.
func TestRetriesEndInFailed(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 503)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Retry: []time.Duration{10 * time.Millisecond, 20 * time.Millisecond}, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, secret, err := s.Create(ctx, h.URL, []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		if _, err := s.Sink()(ctx, evs(1)); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		var ds []*Delivery
		waitUntil(t, "the third attempt failed", func() bool {
			ds, _, _, err = s.Deliveries(ctx, w.ID, 10, "")
			return err == nil && len(ds) == 3 && ds[0].Status == Failed
		})
		cancel()
		<-done
		for i, d := range ds { // newest first
			attempt := 3 - i
			if d.Attempt != attempt || d.Status != Failed || d.HTTPStatus == nil || *d.HTTPStatus != 503 || d.Error == "" {
				t.Errorf("attempt %d: %+v", attempt, d)
			}
			if (attempt < 3) != (d.NextAttemptAt != nil) {
				t.Errorf("attempt %d: nextAttemptAt %v", attempt, d.NextAttemptAt)
			}
		}
		if _, requests := h.count(); requests != 3 {
			t.Errorf("%d requests, want 3 (1 + 2 retries)", requests)
		}
	})
}

// A claim takes several slots' worth of attempts (claimGroups): those
// beyond the free slots wait in the instance, so the endpoint never has
// more than PerWebhook requests of one instance at once.
func TestClaimedAttemptsWaitForASlot(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, PerWebhook: 3, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, secret, err := s.Create(ctx, h.URL, []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		if _, err := s.Sink()(ctx, evs(100)); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		waitUntil(t, "100 events delivered", func() bool { ids, _ := h.count(); return ids == 100 })
		cancel()
		<-done
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.max > 3 {
			t.Errorf("%d requests in flight at once, want at most PerWebhook (3)", h.max)
		}
	})
}

// An attempt whose sender died mid-attempt (SENDING, its claim lapsed) is
// claimed again and sent, with the webhook's waiting attempts.
func TestLapsedClaimIsSentAgain(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, secret, err := s.Create(ctx, h.URL, []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := evs(5)
		if _, err := s.Sink()(ctx, es); err != nil {
			t.Fatal(err)
		}
		// The first event's attempt, as a dead instance left it.
		if _, err := db.Client.WebhookDelivery.Update().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.EventID(es[0].ID)).
			SetStatus(Sending).SetClaim("dead").SetClaimedUntil(time.Now().Add(-time.Second)).Save(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		waitUntil(t, "5 events delivered", func() bool { ids, _ := h.count(); return ids == 5 })
		waitUntil(t, "the lapsed attempt recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.EventID(es[0].ID), webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 1
		})
		cancel()
		<-done
	})
}
