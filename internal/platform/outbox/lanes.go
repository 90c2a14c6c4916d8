package outbox

import (
	"time"

	"entgo.io/ent/dialect/sql"

	entoutbox "storefront/ent/outbox"
	"storefront/ent/predicate"
)

// Lane is one sink's way through the outbox: each outbox row keeps, per
// lane, whether the lane's sink took it and who claims it meanwhile
// (ent/schema/outbox.go). With one claim and one mark for every sink, a
// broker that was down, full or missing its stream would hold the webhooks up
// with it (as long as NATS is stopped, forever while its stream is full
// or deleted); each lane goes at its own pace.
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
// row, and its claim.
type laneColumns struct {
	done  string
	lease LeaseColumns
}

var laneCols = [...]laneColumns{
	LaneBroker: {entoutbox.FieldBrokerAt, LeaseColumns{entoutbox.FieldClaim, entoutbox.FieldClaimedUntil, entoutbox.FieldClaimedBy}},
	LaneWebhooks: {entoutbox.FieldWebhooksAt,
		LeaseColumns{entoutbox.FieldWebhooksClaim, entoutbox.FieldWebhooksClaimedUntil, entoutbox.FieldWebhooksClaimedBy}},
}

func (l Lane) cols() laneColumns { return laneCols[l] }

// lease is the lane's claim on the outbox's rows.
func (l Lane) lease() LeaseColumns { return laneCols[l].lease }

// other is the lane whose mark, with l's, makes a row dispatched.
func (l Lane) other() Lane { return 1 - l }

// undone: rows l has still to hand out. A row dispatched before lanes
// existed has dispatched_at and no lane's mark: done for every lane.
func (l Lane) undone() predicate.Outbox {
	return entoutbox.And(entoutbox.DispatchedAtIsNil(), predicate.Outbox(sql.FieldIsNull(l.cols().done)))
}

// claimable: undone by l, and not claimed for l by a pass whose lease holds.
func (l Lane) claimable(now time.Time) predicate.Outbox {
	return entoutbox.And(l.undone(), predicate.Outbox(l.lease().Free(now)))
}

// claimedWith: l's claim on the row is the pass's token.
func (l Lane) claimedWith(token string) predicate.Outbox {
	return predicate.Outbox(l.lease().Of(token))
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
		u.Set(entoutbox.FieldDispatchedAt, sql.ExprFunc(func(b *sql.Builder) {
			b.WriteString("CASE WHEN ").Ident(other.done).WriteString(" IS NULL THEN ").Ident(entoutbox.FieldDispatchedAt).
				WriteString(" ELSE ").Arg(now).WriteString(" END")
		}))
	}
}
