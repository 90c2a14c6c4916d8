package outbox

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	entoutbox "storefront/ent/outbox"
	"storefront/ent/predicate"
	"storefront/internal/platform/store"
)

// Backlog is what waits in the outbox: events that some lane has not yet
// handed to its sink (a batch's row counts its events), and when the
// oldest was committed (zero when none waits). /metrics shows it: a broker
// or a database that is down makes it grow.
func (d *Dispatcher) Backlog(ctx context.Context) (events int, oldest time.Time, err error) {
	return d.backlog(ctx, entoutbox.DispatchedAtIsNil(), "dispatched_at IS NULL")
}

// LaneBacklog is Backlog for one lane: what its sink has still to take.
func (d *Dispatcher) LaneBacklog(ctx context.Context, lane Lane) (events int, oldest time.Time, err error) {
	return d.backlog(ctx, lane.undone(), "dispatched_at IS NULL AND "+lane.cols().done+" IS NULL")
}

// backlog sums the events of the rows where (in SQL, where) and finds the
// oldest of them.
func (d *Dispatcher) backlog(ctx context.Context, pending predicate.Outbox, where string) (events int, oldest time.Time, err error) {
	// Plain SQL: SUM of no rows is NULL, which ent's typed aggregate will
	// not scan; the oldest is the first row by id (ids grow with time).
	if err := d.db.SQL.QueryRowContext(ctx, "SELECT COALESCE(SUM(events), 0) FROM outbox WHERE "+where).Scan(&events); err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	if events == 0 {
		return 0, time.Time{}, nil
	}
	first, err := d.db.Client.Outbox.Query().Where(pending).Order(entoutbox.ByID()).First(ctx)
	if ent.IsNotFound(err) { // dispatched in between
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	return events, first.CreatedAt, nil
}
