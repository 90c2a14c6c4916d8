package outbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	entoutbox "storefront/ent/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/testsupport/wait"
)

// recorder is a sink that keeps what it took, or refuses everything
// while down is set.
type recorder struct {
	mu   sync.Mutex
	down bool
	got  map[string]int
}

func newRecorder() *recorder { return &recorder{got: map[string]int{}} }

func (r *recorder) sink(_ context.Context, evs []Event) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		return 0, errors.New("maximum messages exceeded")
	}
	for _, e := range evs {
		r.got[e.ID]++
	}
	return len(evs), nil
}

func (r *recorder) set(down bool) { r.mu.Lock(); r.down = down; r.mu.Unlock() }

func (r *recorder) taken() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]int, len(r.got))
	for k, v := range r.got {
		out[k] = v
	}
	return out
}

func laneLeft(t *testing.T, s *Dispatcher, lane Lane) int {
	t.Helper()
	n, _, err := s.LaneBacklog(context.Background(), lane)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func anyLeft(t *testing.T, s *Dispatcher) int {
	t.Helper()
	n, _, err := s.Backlog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Each lane keeps its own progress: with one sink refusing everything
// (NATS full, or its stream deleted), the other lane takes every event,
// once, and the refusing lane keeps all of them waiting; when it takes
// them again they are dispatched (both lanes done), and neither lane hands
// out an event twice. Both ways round.
func TestLanesKeepTheirOwnProgress(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, failing := range Lanes {
			const rows = 40
			emitN(t, db, rows)
			svc := New(db, Config{Instance: "a"})
			sinks := map[Lane]*recorder{LaneBroker: newRecorder(), LaneWebhooks: newRecorder()}
			sinks[failing].set(true)
			working := failing.other()
			for range 3 { // several passes: the failing lane's refusals do not stop the other
				for _, lane := range Lanes {
					_, err := svc.DrainLane(ctx, lane, sinks[lane].sink, 7)
					if (err != nil) != (lane == failing) {
						t.Fatalf("%s failing: %s lane pass: %v", failing, lane, err)
					}
				}
			}
			if got := sinks[working].taken(); len(got) != rows {
				t.Fatalf("%s failing: the %s lane took %d events, want %d", failing, working, len(got), rows)
			}
			if n := laneLeft(t, svc, working); n != 0 {
				t.Errorf("%s failing: %d events wait in the %s lane, want 0", failing, n, working)
			}
			if n := laneLeft(t, svc, failing); n != rows {
				t.Errorf("%s failing: %d events wait in its lane, want %d", failing, n, rows)
			}
			if n := anyLeft(t, svc); n != rows {
				t.Errorf("%s failing: backlog %d, want %d (not dispatched until every lane is done)", failing, n, rows)
			}
			// The failing sink comes back: its lane catches up, the rows are
			// dispatched, and the other lane sends nothing again.
			sinks[failing].set(false)
			if _, err := svc.DrainLane(ctx, failing, sinks[failing].sink, 7); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.DrainLane(ctx, working, sinks[working].sink, 7); err != nil {
				t.Fatal(err)
			}
			for _, lane := range Lanes {
				got := sinks[lane].taken()
				if len(got) != rows {
					t.Errorf("%s failing: %s lane took %d events, want %d", failing, lane, len(got), rows)
				}
				for id, n := range got {
					if n != 1 {
						t.Errorf("%s failing: %s lane took %s %d times", failing, lane, id, n)
					}
				}
			}
			if n := anyLeft(t, svc); n != 0 {
				t.Errorf("%s failing, then back: backlog %d, want 0", failing, n)
			}
			if n, err := db.Client.Outbox.Query().Where(entoutbox.DispatchedAtIsNil()).Count(ctx); n != 0 || err != nil {
				t.Errorf("%s failing, then back: %d rows not dispatched, %v", failing, n, err)
			}
		}
	})
}

// A restarted instance takes back the claims its previous life held, in
// both lanes, at once: the rows go to its next pass well within their
// lease. Another instance's claims, and this instance's lapsed ones, are
// left alone.
func TestTakeBackReleasesTheInstancesOwnClaims(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		emitN(t, db, 6)
		now := time.Now()
		at := func(s *Dispatcher, d time.Duration) *Dispatcher {
			s.now = func() time.Time { return now.Add(d) }
			return s
		}
		for _, lane := range Lanes {
			a := at(New(db, Config{Instance: "web-1/10.0.0.1:8080"}), 0)
			b := at(New(db, Config{Instance: "web-2/10.0.0.2:8080"}), 0)
			if _, rows, err := a.claim(ctx, lane, 2); err != nil || len(rows) != 2 { // a claims and is killed
				t.Fatalf("%s: a's claim: %d rows, %v", lane, len(rows), err)
			}
			if _, rows, err := b.claim(ctx, lane, 2); err != nil || len(rows) != 2 { // b runs on
				t.Fatalf("%s: b's claim: %d rows, %v", lane, len(rows), err)
			}
		}
		// a's instance starts again, 5 s later, with the same id.
		a2 := at(New(db, Config{Instance: "web-1/10.0.0.1:8080"}), 5*time.Second)
		n, err := a2.TakeBack(ctx)
		if err != nil || n != 4 {
			t.Fatalf("TakeBack = %d, %v; want a's 2 claims in each of 2 lanes", n, err)
		}
		for _, lane := range Lanes {
			sink := newRecorder()
			got, err := a2.DrainLane(ctx, lane, sink.sink, 10)
			if err != nil || got != 4 {
				t.Errorf("%s: the restarted instance's pass marked %d rows, %v; want its own 2 taken back and the 2 unclaimed (b's 2 still held)", lane, got, err)
			}
			if n := laneLeft(t, a2, lane); n != 2 {
				t.Errorf("%s: %d events wait, want b's 2", lane, n)
			}
		}
		// Nothing of a's is held any more; b's claims, and a claim of a's
		// that lapsed, are not a's to take.
		if n, err := a2.TakeBack(ctx); n != 0 || err != nil {
			t.Errorf("TakeBack again = %d, %v; want 0", n, err)
		}
		c := at(New(db, Config{Instance: "web-3"}), 0)
		for _, lane := range Lanes {
			if _, rows, err := c.claim(ctx, lane, 10); err != nil || len(rows) != 0 {
				t.Errorf("%s: another instance claimed %d rows, %v; want none (b's still held)", lane, len(rows), err)
			}
		}
		b2 := at(New(db, Config{Instance: "web-2/10.0.0.2:8080"}), ClaimLease+time.Second)
		if n, err := b2.TakeBack(ctx); n != 0 || err != nil {
			t.Errorf("TakeBack of lapsed claims = %d, %v; want 0 (they are anyone's already)", n, err)
		}
	})
}

// A failing lane waits longer after each failing pass (2, 4, 8 s, then
// 10 s at most) and comes back to its interval after a pass that works;
// meanwhile the other lane, running beside it, takes every event.
func TestFailingLaneBacksOff(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		const rows = 30
		emitN(t, db, rows)
		svc := New(db, Config{Instance: "a"})
		broker, hooks := newRecorder(), newRecorder()
		broker.set(true)

		// The webhooks' lane runs for real, every 5 ms.
		hctx, stopHooks := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			svc.RunLane(hctx, LaneWebhooks, hooks.sink, LaneConfig{Interval: 5 * time.Millisecond, Batch: 7})
		})
		defer func() { stopHooks(); wg.Wait() }()

		// The broker's lane at an interval of 1 s, its waits recorded and
		// not slept: after 7 waits the sink comes back, after 9 it stops.
		var waits []time.Duration
		bctx, stopBroker := context.WithCancel(context.Background())
		defer stopBroker()
		svc.RunLane(bctx, LaneBroker, broker.sink, LaneConfig{Interval: time.Second, Batch: 7,
			Wait: func(ctx context.Context, d time.Duration) bool {
				waits = append(waits, d)
				switch len(waits) {
				case 6:
					// Before the broker is back: the webhooks' lane took
					// everything while the broker's failed.
					wait.For(t, "the webhooks' lane to take every event", func() bool { return laneLeft(t, svc, LaneWebhooks) == 0 })
					if n := laneLeft(t, svc, LaneBroker); n != rows {
						t.Errorf("%d events wait for the failing broker, want %d", n, rows)
					}
				case 7:
					broker.set(false)
				case 9:
					return false
				}
				return true
			}})
		s := time.Second
		want := []time.Duration{2 * s, 4 * s, 8 * s, 10 * s, 10 * s, 10 * s, 10 * s, s, s}
		if fmt.Sprint(waits) != fmt.Sprint(want) {
			t.Errorf("the failing lane waited %v, want %v", waits, want)
		}
		if got := hooks.taken(); len(got) != rows {
			t.Errorf("the webhooks' lane took %d events, want %d", len(got), rows)
		}
		if n := laneLeft(t, svc, LaneBroker); n != 0 {
			t.Errorf("%d events wait for the broker after it came back, want 0", n)
		}
	})
}

// Backoff's schedule, including an interval longer than MaxBackoff.
func TestBackoff(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		interval time.Duration
		failed   int
		want     time.Duration
	}{
		{s, 0, s}, {s, 1, 2 * s}, {s, 2, 4 * s}, {s, 3, 8 * s}, {s, 4, 10 * s}, {s, 50, 10 * s},
		{100 * time.Millisecond, 1, 200 * time.Millisecond}, {100 * time.Millisecond, 7, 10 * s},
		{30 * s, 0, 30 * s}, {30 * s, 3, 30 * s},
	} {
		if got := Backoff(tc.interval, tc.failed); got != tc.want {
			t.Errorf("Backoff(%v, %d) = %v, want %v", tc.interval, tc.failed, got, tc.want)
		}
	}
}
