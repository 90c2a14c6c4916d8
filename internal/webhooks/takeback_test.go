package webhooks

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// An instance killed mid-attempt and started again with the same id puts
// its claimed attempts back at start and sends them at once, not after
// their lease (30 s and more); another instance's claims stay its own.
// Both ways of claiming record the instance: the sender's pass and the
// sink's claim as it queues.
func TestRestartTakesBackItsClaimedAttempts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		h := newHookServer(t, 200)
		cfg := func(id string) Config {
			return Config{EventTypes: eventTypes, AllowPrivate: true, Interval: 20 * time.Millisecond, Instance: id}
		}
		a, b := New(db, cfg("web-1/10.0.0.1:8080")), New(db, cfg("web-2/10.0.0.2:8080"))
		w, secret, err := a.Create(ctx, h.URL, []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		h.secret = secret
		es := evs(10)
		if _, err := a.Sink()(ctx, es); err != nil { // no sender runs: queued PENDING
			t.Fatal(err)
		}
		// a claims 5 attempts and is killed before it sends them; b claims
		// 3 and runs on (it never sends them here).
		_, until, mine, err := a.claim(ctx, w.ID, 5, 0)
		if err != nil || len(mine) != 5 {
			t.Fatalf("a's claim: %d, %v", len(mine), err)
		}
		_, _, theirs, err := b.claim(ctx, w.ID, 3, 0)
		if err != nil || len(theirs) != 3 {
			t.Fatalf("b's claim: %d, %v", len(theirs), err)
		}
		for _, d := range append(mine, theirs...) {
			got, err := db.Client.WebhookDelivery.Get(ctx, d.ID)
			if err != nil || got.ClaimedBy == nil || got.Status != Sending {
				t.Fatalf("claimed attempt %d: %+v, %v; want SENDING with its claimer", d.ID, got, err)
			}
		}

		a2 := New(db, cfg("web-1/10.0.0.1:8080")) // a's restart
		n, err := a2.TakeBack(ctx)
		if err != nil || n != 5 {
			t.Fatalf("TakeBack = %d, %v; want a's 5 attempts", n, err)
		}
		start := time.Now()
		stop := run(a2)
		// a's 5 and the 2 nobody claimed, well before a's lease ends.
		for deadline := start.Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if ids, _ := h.count(); ids == 7 {
				break
			}
			if time.Now().After(deadline) {
				ids, _ := h.count()
				t.Fatalf("after the restart: %d events delivered in 10 s, want a's 5 and the 2 unclaimed (a's lease ends in %v)", ids, time.Until(until).Round(time.Second))
			}
		}
		took := time.Since(start)
		waitUntil(t, "the attempts recorded", func() bool {
			n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.Status(Delivered)).Count(ctx)
			return n == 7
		})
		stop()
		if !time.Now().Before(until) {
			t.Fatalf("the test outlived a's lease (%v): it shows nothing", until)
		}
		t.Logf("a's attempts delivered %v after the restart; their lease had %v left", took.Round(time.Millisecond), time.Until(until).Round(time.Second))
		h.mu.Lock()
		for _, d := range theirs {
			if h.got[d.EventID] != 0 {
				t.Errorf("b's claimed attempt of %s was sent by a's restart", d.EventID)
			}
		}
		for _, d := range mine {
			if h.got[d.EventID] != 1 {
				t.Errorf("a's attempt of %s sent %d times, want 1", d.EventID, h.got[d.EventID])
			}
		}
		h.mu.Unlock()
		if n, err := db.Client.WebhookDelivery.Query().Where(webhookdelivery.Status(Sending), webhookdelivery.ClaimedBy("web-2/10.0.0.2:8080")).Count(ctx); n != 3 || err != nil {
			t.Errorf("b's attempts: %d SENDING, %v; want 3 (its claims hold)", n, err)
		}
		if n, err := a2.TakeBack(ctx); n != 0 || err != nil {
			t.Errorf("TakeBack again = %d, %v; want 0", n, err)
		}

		// The rows the sink queues claimed (its sender running, with room)
		// carry the instance too.
		hooks, err := db.Client.Webhook.Query().Where(webhook.ID(w.ID)).All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a2.setRunner(&runner{ctx: ctx, client: http.DefaultClient})
		more := evs(2)
		for i := range more {
			more[i].ID = fmt.Sprintf("10000000-0000-4000-8000-%012d", i)
		}
		q, err := a2.plan(more, hooks)
		a2.setRunner(nil)
		if err != nil || len(q.rows) != 2 || len(q.claimed) != 1 {
			t.Fatalf("plan: %+v, %v; want 2 rows queued claimed", q, err)
		}
		for _, c := range q.rows {
			if by, ok := c.Mutation().ClaimedBy(); !ok || by != "web-1/10.0.0.1:8080" {
				t.Errorf("a row queued claimed records claimer %q (%v)", by, ok)
			}
		}
	})
}
