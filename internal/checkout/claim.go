package checkout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/outbox"
	"storefront/ent/predicate"
	"storefront/internal/platform/store"
)

// ClaimLease is how long a dispatcher's claim on outbox rows, for one
// lane, holds. A dispatcher that dies holding rows delays them this long,
// unless its instance comes back first and takes them back (TakeBack); one
// that is still sending when it lapses may see another instance send them
// too (at least once). The NATS sink gives up on a batch well before it.
const ClaimLease = time.Minute

// claimOf is one dispatch pass's claim: its token and when it was made.
type claimOf struct {
	token string
	at    time.Time
}

// claim takes up to n outbox rows claimable for lane, oldest first, for
// this pass and returns them. Without it every instance's dispatcher sent
// the same rows (three instances delivered 3,350 events 7,219 times): the
// conditional UPDATE lets one pass win each row, the others skip it. The
// claim records this instance's id (Config.Instance) for TakeBack.
func (s *Service) claim(ctx context.Context, lane Lane, n int) (claimOf, []*ent.Outbox, error) {
	c := claimOf{token: claimToken(), at: s.now()}
	ids, err := s.db.Client.Outbox.Query().Where(lane.claimable(c.at)).Order(outbox.ByID()).Limit(n).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return c, nil, store.Classify(errOr(err, "reading outbox"))
	}
	var won int
	// Two instances' claims may deadlock on MySQL: retried, as every
	// transaction is.
	err = store.Retry(ctx, func() (err error) {
		won, err = s.db.Client.Outbox.Update().Where(outbox.IDIn(ids...), lane.claimable(c.at)).
			Modify(lane.setClaim(c.token, s.cfg.Instance, c.at.Add(ClaimLease))).Save(ctx)
		return err
	})
	if err != nil || won == 0 {
		return c, nil, store.Classify(errOr(err, "claiming outbox rows"))
	}
	// By id as well as token: the claim has no index, and the token alone
	// read the whole outbox, dispatched rows and all.
	rows, err := s.db.Client.Outbox.Query().Where(outbox.IDIn(ids...), lane.claimedWith(c.token)).Order(outbox.ByID()).All(ctx)
	if err != nil {
		return c, nil, store.Classify(fmt.Errorf("reading claimed outbox rows: %w", err))
	}
	return c, rows, nil
}

// settle marks the rows done for lane and releases its claim on the rows
// left, so the lane's next pass (of any instance) takes them at once. It
// returns how many rows it marked: fewer than done when the lease lapsed
// and another pass took some.
func (s *Service) settle(ctx context.Context, lane Lane, c claimOf, done, left []*ent.Outbox) (int, error) {
	n := 0
	if len(done) > 0 {
		var err error
		n, err = s.db.Client.Outbox.Update().Where(outbox.IDIn(rowIDs(done)...), lane.claimedWith(c.token), lane.undone()).
			Modify(lane.markDone(s.now())).Save(ctx)
		if err != nil {
			return 0, store.Classify(fmt.Errorf("marking events done for the %s: %w", lane, err))
		}
	}
	if len(left) > 0 {
		// Best effort: an unreleased claim lapses after ClaimLease.
		if _, err := s.db.Client.Outbox.Update().Where(outbox.IDIn(rowIDs(left)...), lane.claimedWith(c.token)).
			Modify(lane.release()).Save(ctx); err != nil {
			return n, store.Classify(fmt.Errorf("releasing outbox rows of the %s: %w", lane, err))
		}
	}
	return n, nil
}

// TakeBack releases, in every lane, the outbox rows that this instance
// (Config.Instance) claimed before it started and whose lease still holds:
// the process that claimed them is gone (killed, crashed) and, without
// this, they waited out ClaimLease. Serve calls it once at start, before
// its dispatchers run. It returns how many claims it released.
//
// Two processes running with the same instance id would release each
// other's claims and may send those events twice (at least once, as a
// lapsed claim does); --instance-id must be unique among running
// instances.
func (s *Service) TakeBack(ctx context.Context) (int, error) {
	if s.cfg.Instance == "" {
		return 0, nil
	}
	now, total := s.now(), 0
	for _, lane := range Lanes {
		var n int
		err := store.Retry(ctx, func() (err error) {
			n, err = s.db.Client.Outbox.Update().Where(lane.undone(), lane.heldBy(s.cfg.Instance, now)).
				Modify(lane.release()).Save(ctx)
			return err
		})
		if err != nil {
			return total, store.Classify(fmt.Errorf("taking back the %s's outbox claims: %w", lane, err))
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

func claimToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Backlog is what waits in the outbox: events that some lane has not yet
// handed to its sink (a batch's row counts its events), and when the
// oldest was committed (zero when none waits). /metrics shows it: a broker
// or a database that is down makes it grow.
func (s *Service) Backlog(ctx context.Context) (events int, oldest time.Time, err error) {
	return s.backlog(ctx, outbox.DispatchedAtIsNil(), "dispatched_at IS NULL")
}

// LaneBacklog is Backlog for one lane: what its sink has still to take.
func (s *Service) LaneBacklog(ctx context.Context, lane Lane) (events int, oldest time.Time, err error) {
	return s.backlog(ctx, lane.undone(), "dispatched_at IS NULL AND "+lane.cols().done+" IS NULL")
}

// backlog sums the events of the rows where (in SQL, where) and finds the
// oldest of them.
func (s *Service) backlog(ctx context.Context, pending predicate.Outbox, where string) (events int, oldest time.Time, err error) {
	// Plain SQL: SUM of no rows is NULL, which ent's typed aggregate will
	// not scan; the oldest is the first row by id (ids grow with time).
	if err := s.db.SQL.QueryRowContext(ctx, "SELECT COALESCE(SUM(events), 0) FROM outbox WHERE "+where).Scan(&events); err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	if events == 0 {
		return 0, time.Time{}, nil
	}
	first, err := s.db.Client.Outbox.Query().Where(pending).Order(outbox.ByID()).First(ctx)
	if ent.IsNotFound(err) { // dispatched in between
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	return events, first.CreatedAt, nil
}
