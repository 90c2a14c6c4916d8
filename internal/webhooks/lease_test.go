package webhooks

import (
	"context"
	"sync"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Two instances' senders claiming the same webhook's due attempts, at
// once and again and again, never both take one: every attempt is claimed
// by exactly one of them (the outbox's Lease, as the outbox's lanes claim
// their rows: outbox's TestLeaseGivesEachRowToOneClaimer).
func TestClaimersNeverShareADelivery(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const attempts = 120
		instance := func(id string) *Service {
			return New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Instance: id})
		}
		a, b := instance("a"), instance("b")
		w, _, err := a.Create(ctx, "http://127.0.0.1:9/hook", []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		// Queued with no sender running: every attempt waits, PENDING.
		if n, err := a.Sink()(ctx, evs(attempts)); n != attempts || err != nil {
			t.Fatalf("Sink = %d, %v", n, err)
		}
		var (
			mu     sync.Mutex
			claims = map[string][]string{} // event id → the senders that claimed it
			wg     sync.WaitGroup
			start  = make(chan struct{})
		)
		for name, s := range map[string]*Service{"a": a, "b": b} {
			wg.Go(func() {
				<-start
				// Bounded: claims that took taken rows again would go on.
				for range attempts {
					_, _, ds, err := s.claim(ctx, w.ID, 7, 0)
					if err != nil {
						t.Errorf("%s: claim: %v", name, err)
						return
					}
					if len(ds) == 0 {
						return
					}
					mu.Lock()
					for _, d := range ds {
						claims[d.EventID] = append(claims[d.EventID], name)
					}
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if len(claims) != attempts {
			t.Errorf("%d attempts claimed, want all %d", len(claims), attempts)
		}
		for id, by := range claims {
			if len(by) != 1 {
				t.Errorf("attempt of %s claimed by %v, want one sender", id, by)
			}
		}
		// Within their lease the claims hold against a third instance.
		c := instance("c")
		c.now = func() time.Time { return time.Now().Add(10 * time.Second) }
		if _, _, ds, err := c.claim(ctx, w.ID, attempts, 0); len(ds) != 0 || err != nil {
			t.Errorf("a third sender within the lease claimed %d, %v; want none", len(ds), err)
		}
	})
}
