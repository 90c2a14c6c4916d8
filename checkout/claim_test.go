package checkout

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/internal/testdb"
	"storefront/store"
)

// emitN writes n single-event outbox rows.
func emitN(t *testing.T, db *store.DB, n int) {
	t.Helper()
	err := store.WithTx(context.Background(), db, func(ctx context.Context, tx *ent.Tx) error {
		for i := range n {
			if err := Emit(ctx, tx, EventOrderPaid, int64(i+1), map[string]string{"orderSn": fmt.Sprint("sn-", i)}, time.Now()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Dispatchers of several instances claim rows before they send them: four
// of them racing over 600 rows hand each event to a sink exactly once
// (before claims, three instances delivered 3,350 events 7,219 times).
func TestDispatchersNeverSendTheSameRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		const rows, dispatchers = 600, 4
		emitN(t, db, rows)
		var (
			mu   sync.Mutex
			sent = map[string]int{}
			wg   sync.WaitGroup
		)
		for range dispatchers {
			svc := New(db, DefaultConfig()) // an instance of its own
			wg.Go(func() {
				sink := func(_ context.Context, evs []Event) (int, error) {
					mu.Lock()
					for _, e := range evs {
						sent[e.ID]++
					}
					mu.Unlock()
					time.Sleep(time.Millisecond) // a broker's round trip: lets the others' passes overlap
					return len(evs), nil
				}
				for {
					n, err := svc.DispatchBatch(context.Background(), sink, 25)
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						left, _, err := svc.Backlog(context.Background())
						if err != nil || left == 0 {
							return
						}
					}
				}
			})
		}
		wg.Wait()
		if len(sent) != rows {
			t.Errorf("%d distinct events sent, want %d", len(sent), rows)
		}
		for id, n := range sent {
			if n != 1 {
				t.Errorf("event %s sent %d times", id, n)
			}
		}
	})
}

// A claim whose dispatcher died lapses after ClaimLease and another takes
// the rows; a claim that holds keeps them from everyone else; rows a sink
// refused are released at once.
func TestClaimsLapseAndRelease(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		emitN(t, db, 3)
		now := time.Now()
		a := New(db, DefaultConfig())
		a.now = func() time.Time { return now }
		c, rows, err := a.claim(ctx, 10) // a claims and "dies"
		if err != nil || len(rows) != 3 || c.token == "" {
			t.Fatalf("claim = %d rows, %v", len(rows), err)
		}
		b := New(db, DefaultConfig())
		b.now = func() time.Time { return now.Add(ClaimLease / 2) }
		var got []Event
		sink := func(_ context.Context, evs []Event) (int, error) { got = append(got, evs...); return len(evs), nil }
		if n, err := b.DispatchBatch(ctx, sink, 10); n != 0 || err != nil || len(got) != 0 {
			t.Fatalf("within the lease: dispatched %d rows (%d events), %v; want none", n, len(got), err)
		}
		b.now = func() time.Time { return now.Add(ClaimLease + time.Second) }
		refuse := func(_ context.Context, evs []Event) (int, error) { return 1, fmt.Errorf("broker down") }
		if n, err := b.DispatchBatch(ctx, refuse, 10); n != 1 || err == nil {
			t.Fatalf("after the lease, a sink taking 1 of 3: marked %d, %v; want 1 and the error", n, err)
		}
		// The two refused rows were released: the next pass takes them.
		if n, err := b.DispatchBatch(ctx, sink, 10); n != 2 || err != nil || len(got) != 2 {
			t.Fatalf("after the release: marked %d (%d events), %v; want 2", n, len(got), err)
		}
		if left, _, err := b.Backlog(ctx); left != 0 || err != nil {
			t.Errorf("backlog %d, %v; want 0", left, err)
		}
		// The dead dispatcher's late mark changes nothing.
		if n, err := a.settle(ctx, c, rows, nil); n != 0 || err != nil {
			t.Errorf("settle of a lapsed claim marked %d, %v; want 0", n, err)
		}
	})
}
