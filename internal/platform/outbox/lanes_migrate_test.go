package outbox

import (
	"context"
	"fmt"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// An outbox made before lanes (one claim and one mark, dispatched_at, for
// every sink; the index (dispatched_at, id)) and before aggregate types
// migrates: the rows it dispatched stay done for every lane, the rows
// still waiting go to both lanes, as the events of the orders their
// payloads name (legacy.go), and a row an older instance holds under the
// old claim (still running during a rolling upgrade) is not sent to the
// broker again until its lease ends. A second migrate changes nothing.
func TestLanesTakeOverAnOldOutbox(t *testing.T) {
	ctx := context.Background()
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			db, err := store.Open(ctx, testdb.Spec(t, b))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := db.SQL.ExecContext(ctx, q, args...); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			// The old schema: the indexes and columns lanes added go (SQLite
			// refuses to drop an indexed column, MySQL names the table).
			on := ""
			if b == testdb.MySQL {
				on = " ON outbox"
			}
			exec("DROP INDEX outbox_dispatched_at_broker_at_id" + on)
			exec("DROP INDEX outbox_dispatched_at_webhooks_at_id" + on)
			for _, c := range []string{"aggregate_type", "claimed_by", "broker_at", "webhooks_at", "webhooks_claim", "webhooks_claimed_until", "webhooks_claimed_by"} {
				exec("ALTER TABLE outbox DROP COLUMN " + c)
			}
			exec("ALTER TABLE webhook_delivery DROP COLUMN claimed_by")
			exec("CREATE INDEX outbox_dispatched_at_id ON outbox (dispatched_at, id)")
			old := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			held := time.Now().Add(ClaimLease / 2)
			insert := "INSERT INTO outbox (id, event_id, type, aggregate_id, payload, created_at, dispatched_at, events, claim, claimed_until) VALUES (?, ?, 'OrderPaid', ?, ?, ?, ?, 1, ?, ?)"
			// An old release's row of an order event: aggregate_id the
			// order's database id, the payload naming the order by number.
			row := func(id int) []any {
				return []any{id, fmt.Sprintf("00000000-0000-4000-8000-%012d", id), fmt.Sprint(40 + id), fmt.Sprintf(`{"orderSn":"sn-%d"}`, id)}
			}
			exec(insert, append(row(1), old, old, nil, nil)...)                                 // dispatched
			exec(insert, append(row(2), old, nil, nil, nil)...)                                 // waiting
			exec(insert, append(row(3), old, nil, "0123456789abcdef0123456789abcdef", held)...) // an old instance sends it

			for range 2 {
				if err := db.Migrate(ctx); err != nil {
					t.Fatalf("migrating the old outbox: %v", err)
				}
			}
			svc := New(db, Config{Instance: "new"})
			want := map[Lane]string{LaneBroker: "[00000000-0000-4000-8000-000000000002]",
				LaneWebhooks: "[00000000-0000-4000-8000-000000000002 00000000-0000-4000-8000-000000000003]"}
			for _, lane := range Lanes {
				var got []string
				sink := func(_ context.Context, evs []Event) (int, error) {
					for _, e := range evs {
						got = append(got, e.ID)
						// The order's number, as the subject was before.
						if want := (Aggregate{Type: "order", ID: "sn-" + e.ID[len(e.ID)-1:]}); e.Aggregate != want {
							t.Errorf("%s lane: event %s of an old row is about %+v, want %+v", lane, e.ID, e.Aggregate, want)
						}
					}
					return len(evs), nil
				}
				if _, err := svc.DrainLane(ctx, lane, sink, 10); err != nil {
					t.Fatal(err)
				}
				if s := fmt.Sprint(got); s != want[lane] {
					t.Errorf("%s lane after migrating: took %s, want %s", lane, s, want[lane])
				}
			}
			// Row 3 waits only for the broker (the old instance's claim):
			// then it is dispatched like the others.
			if n := laneLeft(t, svc, LaneBroker); n != 1 {
				t.Errorf("broker lane: %d waiting, want row 3", n)
			}
			svc.now = func() time.Time { return held.Add(time.Second) }
			if n, err := svc.DrainLane(ctx, LaneBroker, newRecorder().sink, 10); n != 1 || err != nil {
				t.Errorf("broker lane after the old claim lapsed: marked %d, %v; want row 3", n, err)
			}
			if n := anyLeft(t, svc); n != 0 {
				t.Errorf("backlog %d, want 0", n)
			}
		})
	}
}
