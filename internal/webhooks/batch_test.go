package webhooks

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	entoutbox "storefront/ent/outbox"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// batchRow writes an outbox row of n OrderPlaced events as a group-commit
// batch writes it (one row, each event with an id of its own) and returns
// its events as the dispatcher hands them out (outbox.RowEvents).
func batchRow(t *testing.T, db *store.DB, n int) []outbox.Event {
	t.Helper()
	ctx := context.Background()
	tag := time.Now().UnixNano()
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"eventId":"%08x-0000-4000-8000-%012d","payload":{"orderSn":"sn-%d-%d","status":"UNPAID"}}`, tag%(1<<32), i, tag, i)
	}
	b.WriteByte(']')
	r, err := db.Client.Outbox.Create().SetEventID(fmt.Sprintf("%08x-0000-4000-9000-000000000000", tag%(1<<32))).
		SetType(orderPlaced).SetAggregateID("").SetPayload(b.String()).SetEvents(n).Save(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r, err = db.Client.Outbox.Query().Where(entoutbox.ID(r.ID)).Only(ctx) // created_at as the database keeps it
	if err != nil {
		t.Fatal(err)
	}
	evs, err := outbox.RowEvents(r)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// run starts s's sender and returns its stop.
func run(s *Service) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Run(ctx) })
	return func() { cancel(); wg.Wait() }
}

// allPages pages through webhook id's deliveries size at a time.
func allPages(t *testing.T, s *Service, id int64, size int) []*Delivery {
	t.Helper()
	var out []*Delivery
	after := ""
	seen := map[string]bool{}
	for range 1000 {
		ds, cursors, more, err := s.Deliveries(context.Background(), id, size, after)
		if err != nil {
			t.Fatalf("Deliveries(first %d, after %q): %v", size, after, err)
		}
		if len(ds) > size || len(cursors) != len(ds) || (more && len(ds) != size) {
			t.Fatalf("Deliveries(first %d): %d entries, %d cursors, more %v", size, len(ds), len(cursors), more)
		}
		for _, c := range cursors {
			if seen[c] {
				t.Fatalf("cursor %q twice", c)
			}
			seen[c] = true
		}
		out = append(out, ds...)
		if !more {
			return out
		}
		after = cursors[len(cursors)-1]
	}
	t.Fatal("paging does not end")
	return nil
}

func rowsOf(t *testing.T, db *store.DB, id int64) int {
	t.Helper()
	n, err := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(id)).Count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The N events of one outbox row are queued as one row per webhook (also
// when the dispatcher hands them over again), claimed once and recorded
// once: each event reaches the endpoint once, signed with its own id, and
// webhookDeliveries lists each of them, in the row's order.
func TestBatchRowIsOneClaimForItsEvents(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Interval: 20 * time.Millisecond})
		ctx := context.Background()
		w, secret, err := s.Create(ctx, h.URL, []string{orderPlaced}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := batchRow(t, db, 5)
		for range 2 {
			if n, err := s.Sink()(ctx, es); n != 5 || err != nil {
				t.Fatalf("Sink = %d, %v", n, err)
			}
		}
		if n := rowsOf(t, db, w.ID); n != 1 {
			t.Fatalf("%d delivery rows queued for one outbox row of 5 events, want 1", n)
		}
		stop := run(s)
		waitUntil(t, "the row recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 1
		})
		stop()
		ids, requests := h.count()
		if ids != 5 || requests != 5 {
			t.Errorf("endpoint got %d ids in %d requests, want 5 in 5", ids, requests)
		}
		for _, b := range h.bad {
			t.Error(b)
		}
		d, err := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID)).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.Events != 5 || d.OutboxID == nil || *d.OutboxID != es[0].Row.ID || d.Body != "" || d.Split != "" ||
			d.HTTPStatus == nil || *d.HTTPStatus != 200 || d.Claim == nil {
			t.Errorf("the row: %+v", d)
		}
		ds := allPages(t, s, w.ID, 100)
		if len(ds) != 5 {
			t.Fatalf("webhookDeliveries lists %d attempts, want 5", len(ds))
		}
		for i, d := range ds {
			if d.EventID != es[i].ID || d.EventType != orderPlaced || d.Attempt != 1 || d.Status != Delivered ||
				d.HTTPStatus == nil || *d.HTTPStatus != 200 || d.NextAttemptAt != nil {
				t.Errorf("entry %d: %+v, want event %s delivered", i, d, es[i].ID)
			}
		}
	})
}

// One event of a row refused with 500: only it gets rows of its own (its
// failed attempt 1 and its retry), the row records the other events, the
// retry delivers it, and webhookDeliveries shows each event's attempts.
func TestBatchRowRefusedEventIsRetriedAlone(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Retry: []time.Duration{30 * time.Millisecond}, Interval: 20 * time.Millisecond})
		ctx := context.Background()
		w, secret, err := s.Create(ctx, h.URL, []string{orderPlaced}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := batchRow(t, db, 4)
		h.refuse[es[2].ID] = 1
		if _, err := s.Sink()(ctx, es); err != nil {
			t.Fatal(err)
		}
		stop := run(s)
		waitUntil(t, "the retry recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.EventID(es[2].ID),
				webhookdelivery.Attempt(2), webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 1
		})
		stop()
		for _, b := range h.bad {
			t.Error(b)
		}
		h.mu.Lock()
		for i, e := range es {
			if want := 1 + btoi(i == 2); h.got[e.ID] != want {
				t.Errorf("event %d: %d requests, want %d", i, h.got[e.ID], want)
			}
		}
		h.mu.Unlock()
		if n := rowsOf(t, db, w.ID); n != 3 {
			t.Errorf("%d delivery rows, want 3 (the row, the refused event's attempts 1 and 2)", n)
		}
		row, err := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.OutboxIDNotNil()).Only(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if row.Status != Delivered || row.Split != "2" || row.HTTPStatus == nil || *row.HTTPStatus != 200 {
			t.Errorf("the row: status %s, split %q, http %v; want DELIVERED, split 2, 200", row.Status, row.Split, row.HTTPStatus)
		}
		ds := allPages(t, s, w.ID, 100)
		type want struct {
			event   string
			attempt int
			status  string
			code    int
			next    bool
		}
		wants := []want{
			{es[2].ID, 2, Delivered, 200, false}, // newest first: the retry,
			{es[2].ID, 1, Failed, 500, true},     // the refused attempt,
			{es[0].ID, 1, Delivered, 200, false}, // the row's others, in order
			{es[1].ID, 1, Delivered, 200, false},
			{es[3].ID, 1, Delivered, 200, false},
		}
		if len(ds) != len(wants) {
			t.Fatalf("webhookDeliveries: %d entries, want %d", len(ds), len(wants))
		}
		for i, w := range wants {
			d := ds[i]
			if d.EventID != w.event || d.Attempt != w.attempt || d.Status != w.status || d.HTTPStatus == nil ||
				*d.HTTPStatus != w.code || (d.NextAttemptAt != nil) != w.next || (w.status == Failed) == (d.Error == "") {
				t.Errorf("entry %d: %+v, want %+v", i, d, w)
			}
		}
		for size := 1; size <= 5; size++ {
			if got := allPages(t, s, w.ID, size); !sameEntries(got, ds) {
				t.Errorf("pages of %d: %v, want %v", size, ids(got), ids(ds))
			}
		}
	})
}

// webhookDeliveries pages across rows of one event and a row of several:
// a page may end inside the row, and the next goes on from there; pages
// of every size list the same entries as one page.
func TestDeliveriesPageAcrossABatchRow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true})
		ctx := context.Background()
		w, _, err := s.Create(ctx, "http://127.0.0.1:1/", []string{orderPlaced, orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		single := evs(2) // OrderPaid events of no outbox row: a row each
		batch := batchRow(t, db, 5)
		for _, es := range [][]outbox.Event{single[:1], batch, single[1:]} {
			if _, err := s.Sink()(ctx, es); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{single[1].ID, batch[0].ID, batch[1].ID, batch[2].ID, batch[3].ID, batch[4].ID, single[0].ID}
		all := allPages(t, s, w.ID, 100)
		if got := ids(all); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("one page: %v, want %v", got, want)
		}
		for _, d := range all {
			if d.Status != Pending || d.Attempt != 1 {
				t.Errorf("%+v: want a pending first attempt", d)
			}
		}
		for size := 1; size <= 8; size++ {
			if got := allPages(t, s, w.ID, size); !sameEntries(got, all) {
				t.Errorf("pages of %d: %v, want %v", size, ids(got), want)
			}
		}
		// A page of 2 ends inside the row; the cursor goes on at its third event.
		ds, cursors, more, err := s.Deliveries(ctx, w.ID, 2, "")
		if err != nil || len(ds) != 2 || !more {
			t.Fatalf("first page: %v, %v, %v", ids(ds), more, err)
		}
		ds, _, _, err = s.Deliveries(ctx, w.ID, 2, cursors[1])
		if err != nil || len(ds) != 2 || ds[0].EventID != batch[1].ID || ds[1].EventID != batch[2].ID {
			t.Errorf("second page: %v, %v; want %s %s", ids(ds), err, batch[1].ID, batch[2].ID)
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func ids(ds []*Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s#%d", d.EventID, d.Attempt)
	}
	for i := range out {
		out[i] = strings.TrimSuffix(out[i], "#1")
	}
	return out
}

func sameEntries(a, b []*Delivery) bool {
	return strings.Join(ids(a), " ") == strings.Join(ids(b), " ")
}

// Events queued while two instances' senders run: the queuing instance
// claims the rows as it inserts them and sends them from the events in
// hand; the other never sends them, a repeat of the events (at least
// once) sends nothing again, and every row ends recorded DELIVERED.
func TestQueuedWhileRunningIsSentOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 200)
		// Room for all 60 events at once (claimGroups × 16 slots).
		cfg := Config{EventTypes: eventTypes, AllowPrivate: true, PerWebhook: 16, Interval: 20 * time.Millisecond}
		a, b := New(db, cfg), New(db, cfg)
		ctx := context.Background()
		w, secret, err := a.Create(ctx, h.URL, []string{orderPlaced, orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		stopA, stopB := run(a), run(b)
		waitUntil(t, "both senders running", func() bool { return a.runner() != nil && b.runner() != nil })
		var all []outbox.Event
		for range 6 {
			es := append(batchRow(t, db, 7), evs(3)...)
			for i := range es[7:] {
				es[7+i].ID = fmt.Sprintf("%s-%d", es[0].ID[:30], i) // a fresh id per round
			}
			all = append(all, es...)
			for range 2 {
				if n, err := a.Sink()(ctx, es); n != len(es) || err != nil {
					t.Fatalf("Sink = %d, %v", n, err)
				}
			}
		}
		waitUntil(t, "every event delivered", func() bool { ids, _ := h.count(); return ids == len(all) })
		waitUntil(t, "every row recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.StatusNEQ(Delivered)).Count(ctx)
			return n == 0
		})
		stopA()
		stopB()
		if _, requests := h.count(); requests != len(all) {
			t.Errorf("%d requests for %d events, want one each", requests, len(all))
		}
		for _, b := range h.bad {
			t.Error(b)
		}
		if n := rowsOf(t, db, w.ID); n != 6*4 {
			t.Errorf("%d delivery rows, want 24 (per round one for the outbox row, one per single event)", n)
		}
		if n := a.startedQueued.Load(); n != 6*4 {
			t.Errorf("%d rows started as they were queued, want all 24 (the sender had room for each round)", n)
		}
	})
}

// Events of one row answered with different 2xx statuses are all
// delivered, none retried: the row records the most common status, and
// the event answered otherwise gets a DELIVERED row of its own, so that
// webhookDeliveries shows each event's own status.
func TestBatchRowOtherStatusGetsItsOwnRow(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		h := newHookServer(t, 204)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Interval: 20 * time.Millisecond})
		ctx := context.Background()
		w, secret, err := s.Create(ctx, h.URL, []string{orderPlaced}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := batchRow(t, db, 3)
		h.answer[es[1].ID] = 200
		if _, err := s.Sink()(ctx, es); err != nil {
			t.Fatal(err)
		}
		stop := run(s)
		waitUntil(t, "the row recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.OutboxIDNotNil(),
				webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 1
		})
		stop()
		if _, requests := h.count(); requests != 3 {
			t.Errorf("%d requests, want 3 (none retried)", requests)
		}
		ds := allPages(t, s, w.ID, 100)
		got := make([]string, len(ds))
		for i, d := range ds {
			code := 0
			if d.HTTPStatus != nil {
				code = *d.HTTPStatus
			}
			got[i] = fmt.Sprintf("%s %s %d %d", d.EventID, d.Status, d.Attempt, code)
		}
		want := []string{es[1].ID + " DELIVERED 1 200", es[0].ID + " DELIVERED 1 204", es[2].ID + " DELIVERED 1 204"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("webhookDeliveries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}
