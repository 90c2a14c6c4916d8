package outbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"storefront/ent"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// testEvent is the tests' event type, about aggregates of type "test":
// the outbox carries any domain's events alike.
const testEvent = "TestHappened"

// emitN writes n single-event outbox rows.
func emitN(t *testing.T, db *store.DB, n int) {
	t.Helper()
	err := store.WithTx(context.Background(), db, func(ctx context.Context, tx *ent.Tx) error {
		for i := range n {
			if err := Emit(ctx, tx, Aggregate{Type: "test", ID: fmt.Sprint("t-", i)}, testEvent, map[string]int{"n": i}, time.Now()); err != nil {
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
// of them racing over 600 rows, each running both lanes, hand each event
// to each lane's sink exactly once (before claims, three instances
// delivered 3,350 events 7,219 times).
func TestDispatchersNeverSendTheSameRows(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		const rows, dispatchers = 600, 4
		emitN(t, db, rows)
		var (
			mu   sync.Mutex
			sent = map[Lane]map[string]int{LaneBroker: {}, LaneWebhooks: {}}
			wg   sync.WaitGroup
		)
		for i := range dispatchers {
			svc := New(db, Config{Instance: fmt.Sprint("i", i)}) // an instance of its own
			for _, lane := range Lanes {
				wg.Go(func() {
					sink := func(_ context.Context, evs []Event) (int, error) {
						mu.Lock()
						for _, e := range evs {
							sent[lane][e.ID]++
						}
						mu.Unlock()
						time.Sleep(time.Millisecond) // a broker's round trip: lets the others' passes overlap
						return len(evs), nil
					}
					for {
						n, err := svc.DispatchLane(context.Background(), lane, sink, 25)
						if err != nil {
							t.Error(err)
							return
						}
						if n == 0 {
							left, _, err := svc.LaneBacklog(context.Background(), lane)
							if err != nil || left == 0 {
								return
							}
						}
					}
				})
			}
		}
		wg.Wait()
		for _, lane := range Lanes {
			if len(sent[lane]) != rows {
				t.Errorf("%s: %d distinct events sent, want %d", lane, len(sent[lane]), rows)
			}
			for id, n := range sent[lane] {
				if n != 1 {
					t.Errorf("%s: event %s sent %d times", lane, id, n)
				}
			}
		}
		if left, _, err := New(db, Config{}).Backlog(context.Background()); left != 0 || err != nil {
			t.Errorf("backlog after both lanes: %d, %v; want 0", left, err)
		}
	})
}

// A claim whose dispatcher died lapses after ClaimLease and another takes
// the rows; a claim that holds keeps them from everyone else; rows a sink
// refused are released at once. Each lane on its own.
func TestClaimsLapseAndRelease(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		emitN(t, db, 3)
		for _, lane := range Lanes {
			now := time.Now()
			a := New(db, Config{})
			a.now = func() time.Time { return now }
			c, rows, err := a.claim(ctx, lane, 10) // a claims and "dies"
			if err != nil || len(rows) != 3 || c.Token == "" {
				t.Fatalf("%s: claim = %d rows, %v", lane, len(rows), err)
			}
			b := New(db, Config{})
			b.now = func() time.Time { return now.Add(ClaimLease / 2) }
			var got []Event
			sink := func(_ context.Context, evs []Event) (int, error) { got = append(got, evs...); return len(evs), nil }
			if n, err := b.DispatchLane(ctx, lane, sink, 10); n != 0 || err != nil || len(got) != 0 {
				t.Fatalf("%s: within the lease: dispatched %d rows (%d events), %v; want none", lane, n, len(got), err)
			}
			b.now = func() time.Time { return now.Add(ClaimLease + time.Second) }
			refuse := func(_ context.Context, evs []Event) (int, error) { return 1, fmt.Errorf("broker down") }
			if n, err := b.DispatchLane(ctx, lane, refuse, 10); n != 1 || err == nil {
				t.Fatalf("%s: after the lease, a sink taking 1 of 3: marked %d, %v; want 1 and the error", lane, n, err)
			}
			// The two refused rows were released: the next pass takes them.
			if n, err := b.DispatchLane(ctx, lane, sink, 10); n != 2 || err != nil || len(got) != 2 {
				t.Fatalf("%s: after the release: marked %d (%d events), %v; want 2", lane, n, len(got), err)
			}
			if left, _, err := b.LaneBacklog(ctx, lane); left != 0 || err != nil {
				t.Errorf("%s: backlog %d, %v; want 0", lane, left, err)
			}
			// The dead dispatcher's late mark changes nothing.
			if n, err := a.settle(ctx, lane, c, rows, nil); n != 0 || err != nil {
				t.Errorf("%s: settle of a lapsed claim marked %d, %v; want 0", lane, n, err)
			}
		}
		if left, _, err := New(db, Config{}).Backlog(ctx); left != 0 || err != nil {
			t.Errorf("backlog after both lanes: %d, %v; want 0", left, err)
		}
	})
}
