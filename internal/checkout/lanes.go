package checkout

import (
	"context"
	"time"

	"entgo.io/ent/dialect/sql"

	"storefront/ent/outbox"
	"storefront/ent/predicate"
)

// Lane is one sink's way through the outbox: each outbox row keeps, per
// lane, whether the lane's sink took it and who claims it meanwhile
// (ent/schema/outbox.go). With one claim and one mark for every sink, a
// broker that was down, full or missing its stream held the webhooks up
// with it (issue 38: 22 s with NATS stopped, forever while its stream was
// full or deleted); each lane goes at its own pace.
type Lane int

const (
	// LaneBroker hands events to NATS JetStream (or the log without
	// --events-nats).
	LaneBroker Lane = iota
	// LaneWebhooks queues events for the webhooks subscribed to them.
	LaneWebhooks
)

// Lanes is every lane, in the order serve starts them.
var Lanes = []Lane{LaneBroker, LaneWebhooks}

func (l Lane) String() string {
	if l == LaneWebhooks {
		return "webhooks"
	}
	return "broker"
}

// laneColumns are a lane's columns of the outbox: when it was done with a
// row, and its claim (token, lease, claimer's instance id).
type laneColumns struct{ done, claim, until, by string }

var laneCols = [...]laneColumns{
	LaneBroker:   {outbox.FieldBrokerAt, outbox.FieldClaim, outbox.FieldClaimedUntil, outbox.FieldClaimedBy},
	LaneWebhooks: {outbox.FieldWebhooksAt, outbox.FieldWebhooksClaim, outbox.FieldWebhooksClaimedUntil, outbox.FieldWebhooksClaimedBy},
}

func (l Lane) cols() laneColumns { return laneCols[l] }

// other is the lane whose mark, with l's, makes a row dispatched.
func (l Lane) other() Lane { return 1 - l }

// undone: rows l has still to hand out. A row dispatched before lanes
// existed has dispatched_at and no lane's mark: done for every lane.
func (l Lane) undone() predicate.Outbox {
	return outbox.And(outbox.DispatchedAtIsNil(), predicate.Outbox(sql.FieldIsNull(l.cols().done)))
}

// claimable: undone by l, and not claimed for l by a pass whose lease holds.
func (l Lane) claimable(now time.Time) predicate.Outbox {
	c := l.cols()
	return outbox.And(l.undone(), outbox.Or(predicate.Outbox(sql.FieldIsNull(c.until)), predicate.Outbox(sql.FieldLT(c.until, now))))
}

// claimedWith: l's claim on the row is the pass's token.
func (l Lane) claimedWith(token string) predicate.Outbox {
	return predicate.Outbox(sql.FieldEQ(l.cols().claim, token))
}

// heldBy: l's claim on the row is instance's, and its lease holds at now.
func (l Lane) heldBy(instance string, now time.Time) predicate.Outbox {
	c := l.cols()
	return outbox.And(predicate.Outbox(sql.FieldEQ(c.by, instance)), predicate.Outbox(sql.FieldGTE(c.until, now)))
}

// setClaim sets l's claim; release clears it.
func (l Lane) setClaim(token, instance string, until time.Time) func(*sql.UpdateBuilder) {
	c := l.cols()
	return func(u *sql.UpdateBuilder) {
		u.Set(c.claim, token).Set(c.until, until)
		if instance == "" {
			u.SetNull(c.by)
		} else {
			u.Set(c.by, instance)
		}
	}
}

func (l Lane) release() func(*sql.UpdateBuilder) {
	c := l.cols()
	return func(u *sql.UpdateBuilder) { u.SetNull(c.claim).SetNull(c.until).SetNull(c.by) }
}

// markDone marks rows done for l at now, and dispatched where the other
// lane was done already. One statement, so that of two lanes finishing a
// row at once the second always sees the first (a row's UPDATEs take its
// lock in turn, and each reads the row as the one before left it), and a
// crash never leaves a row done by both lanes and not dispatched. The
// column's own value in the other branch (NULL: only undone rows are
// marked) types the CASE on PostgreSQL, where a bare parameter would be
// text; and the other lane's column is read as the statement found it, on
// MySQL too, which sees earlier assignments of the same UPDATE: this one
// assigns only l's.
func (l Lane) markDone(now time.Time) func(*sql.UpdateBuilder) {
	c, other := l.cols(), l.other().cols()
	return func(u *sql.UpdateBuilder) {
		u.Set(c.done, now)
		u.Set(outbox.FieldDispatchedAt, sql.ExprFunc(func(b *sql.Builder) {
			b.WriteString("CASE WHEN ").Ident(other.done).WriteString(" IS NULL THEN ").Ident(outbox.FieldDispatchedAt).
				WriteString(" ELSE ").Arg(now).WriteString(" END")
		}))
	}
}

// DispatchLane claims up to batch rows that lane has still to hand out,
// oldest first (claim.go: no other dispatcher hands them to this lane's
// sink meanwhile), gives their events to sink and marks done, for lane,
// the rows whose events it all accepted. It returns how many rows it
// marked, and the error of a row it could not read or of the sink (the
// rows before it are marked; it and the later ones wait, released for the
// lane's next pass). The other lane's progress is its own.
func (s *Service) DispatchLane(ctx context.Context, lane Lane, sink BatchSink, batch int) (int, error) {
	c, rows, err := s.claim(ctx, lane, batch)
	if err != nil || len(rows) == 0 {
		return 0, err
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
	n, err := s.settle(ctx, lane, c, rows[:done], rows[done:])
	if err != nil {
		return n, err
	}
	return n, bad
}

// DrainLane dispatches lane in batches of batch rows until one comes back
// short (nothing more is waiting) or fails; it returns how many rows it
// marked done.
func (s *Service) DrainLane(ctx context.Context, lane Lane, sink BatchSink, batch int) (int, error) {
	total := 0
	for {
		n, err := s.DispatchLane(ctx, lane, sink, batch)
		total += n
		if err != nil || n < batch {
			return total, err
		}
	}
}
