package outbox

import (
	"context"
	"fmt"
	"time"

	"entgo.io/ent/dialect/sql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/ent"
	entoutbox "storefront/ent/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

// ClaimLease is how long a dispatcher's claim on outbox rows, for one
// lane, holds. A dispatcher that dies holding rows delays them this long,
// unless its instance comes back first and takes them back (TakeBack); one
// that is still sending when it lapses may see another instance send them
// too (at least once). The NATS sink gives up on a batch well before it.
const ClaimLease = time.Minute

// Config is the dispatcher's.
type Config struct {
	// Instance is this process's id (serve's --instance-id): the claims
	// the dispatcher makes record it, and TakeBack releases those of its
	// previous life at start.
	Instance string
	// Tracing gives each pass that claimed rows a span (nil: off).
	Tracing *tracing.Tracing
}

// Dispatcher hands the outbox's events to each lane's sink, once per lane
// whichever instances run it.
type Dispatcher struct {
	db  *store.DB
	cfg Config
	now func() time.Time
}

// New returns the dispatcher of db's outbox.
func New(db *store.DB, cfg Config) *Dispatcher {
	return &Dispatcher{db: db, cfg: cfg, now: time.Now}
}

// DispatchLane claims up to batch rows that lane has still to hand out,
// oldest first (no other dispatcher hands them to this lane's sink
// meanwhile), gives their events to sink and marks done, for lane, the
// rows whose events it all accepted. It returns how many rows it marked,
// and the error of a row it could not read or of the sink (the rows before
// it are marked; it and the later ones wait, released for the lane's next
// pass). The other lane's progress is its own.
func (d *Dispatcher) DispatchLane(ctx context.Context, lane Lane, sink BatchSink, batch int) (_ int, err error) {
	c, rows, err := d.claim(ctx, lane, batch)
	if err != nil || len(rows) == 0 {
		return 0, err
	}
	if d.cfg.Tracing.On() {
		// Only a pass that found work: an idle outbox makes no traces.
		var span trace.Span
		ctx, span = d.cfg.Tracing.Start(ctx, "outbox.dispatch "+lane.String(), trace.WithAttributes(
			attribute.String("outbox.lane", lane.String()), attribute.Int("outbox.rows", len(rows))))
		defer func() { tracing.End(span, err) }()
	}
	var (
		evs  []Event
		ends []int // ends[i]: events of rows[:i+1]
		bad  error
	)
	for _, r := range rows {
		rev, err := RowEvents(r)
		if err != nil {
			// Like a failing sink: the rows before it are marked, this one
			// and the later ones wait (and the error is reported).
			bad = err
			break
		}
		evs = append(evs, rev...)
		ends = append(ends, len(evs))
	}
	accepted := 0
	if len(evs) > 0 {
		var err error
		// Keep order: events after a refused one wait for it. A row's
		// earlier events go again with it (at least once).
		if accepted, err = sink(ctx, evs); err != nil && bad == nil {
			bad = err
		}
	}
	done := 0 // rows all of whose events the sink accepted
	for done < len(ends) && ends[done] <= accepted {
		done++
	}
	n, err := d.settle(ctx, lane, c, rows[:done], rows[done:])
	if err != nil {
		return n, err
	}
	return n, bad
}

// DrainLane dispatches lane in batches of batch rows until one comes back
// short (nothing more is waiting) or fails; it returns how many rows it
// marked done.
func (d *Dispatcher) DrainLane(ctx context.Context, lane Lane, sink BatchSink, batch int) (int, error) {
	total := 0
	for {
		n, err := d.DispatchLane(ctx, lane, sink, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}

// Dispatch is DispatchLane of the broker's lane with a sink of one event
// at a time: what the tests of the events a change writes look at.
func (d *Dispatcher) Dispatch(ctx context.Context, sink Sink, batch int) (int, error) {
	return d.DispatchLane(ctx, LaneBroker, sink.Batch(), batch)
}

// claim takes up to n outbox rows claimable for lane, oldest first, for
// this pass (Lease) and returns them. The claim records this instance's id
// (Config.Instance) for TakeBack.
func (d *Dispatcher) claim(ctx context.Context, lane Lane, n int) (Lease, []*ent.Outbox, error) {
	now := d.now()
	c := NewLease(d.cfg.Instance, now, now.Add(ClaimLease))
	ids, err := d.db.Client.Outbox.Query().Where(lane.claimable(now)).Order(entoutbox.ByID()).Limit(n).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return c, nil, store.Classify(errOr(err, "reading outbox"))
	}
	won, err := lane.lease().Take(ctx, c, func(ctx context.Context, set func(*sql.UpdateBuilder)) (int, error) {
		return d.db.Client.Outbox.Update().Where(entoutbox.IDIn(ids...), lane.claimable(now)).Modify(set).Save(ctx)
	})
	if err != nil || won == 0 {
		return c, nil, errOr(err, "claiming outbox rows")
	}
	// By id as well as token: the claim has no index, and the token alone
	// read the whole outbox, dispatched rows and all.
	rows, err := d.db.Client.Outbox.Query().Where(entoutbox.IDIn(ids...), lane.claimedWith(c.Token)).Order(entoutbox.ByID()).All(ctx)
	if err != nil {
		return c, nil, store.Classify(fmt.Errorf("reading claimed outbox rows: %w", err))
	}
	return c, rows, nil
}

// settle marks the rows done for lane and releases its claim on the rows
// left, so the lane's next pass (of any instance) takes them at once. It
// returns how many rows it marked: fewer than done when the lease lapsed
// and another pass took some.
func (d *Dispatcher) settle(ctx context.Context, lane Lane, c Lease, done, left []*ent.Outbox) (int, error) {
	n := 0
	if len(done) > 0 {
		var err error
		n, err = d.db.Client.Outbox.Update().Where(entoutbox.IDIn(rowIDs(done)...), lane.claimedWith(c.Token), lane.undone()).
			Modify(lane.markDone(d.now())).Save(ctx)
		if err != nil {
			return 0, store.Classify(fmt.Errorf("marking events done for the %s: %w", lane, err))
		}
	}
	if len(left) > 0 {
		// Best effort: an unreleased claim lapses after ClaimLease.
		if _, err := d.db.Client.Outbox.Update().Where(entoutbox.IDIn(rowIDs(left)...), lane.claimedWith(c.Token)).
			Modify(lane.lease().Clear()).Save(ctx); err != nil {
			return n, store.Classify(fmt.Errorf("releasing outbox rows of the %s: %w", lane, err))
		}
	}
	return n, nil
}

// TakeBack releases, in every lane, the outbox rows that this instance
// (Config.Instance) claimed before it started and whose lease still holds
// (Lease.TakeBack). Serve calls it once at start, before its dispatchers
// run. It returns how many claims it released.
func (d *Dispatcher) TakeBack(ctx context.Context) (int, error) {
	now, total := d.now(), 0
	for _, lane := range Lanes {
		n, err := lane.lease().TakeBack(ctx, d.cfg.Instance, now,
			func(ctx context.Context, held func(*sql.Selector), clear func(*sql.UpdateBuilder)) (int, error) {
				return d.db.Client.Outbox.Update().Where(lane.undone(), held).Modify(clear).Save(ctx)
			})
		if err != nil {
			return total, fmt.Errorf("taking back the %s's outbox claims: %w", lane, err)
		}
		total += n
	}
	return total, nil
}

func rowIDs(rows []*ent.Outbox) []int64 {
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids
}

func errOr(err error, what string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
