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
	"storefront/store"
)

// ClaimLease is how long a dispatcher's claim on outbox rows holds. A
// dispatcher that dies holding rows delays them this long; one that is
// still sending when it lapses may see another instance send them too
// (at least once). The NATS sink gives up on a batch well before it.
const ClaimLease = time.Minute

// claimOf is one dispatch pass's claim: its token and when it was made.
type claimOf struct {
	token string
	at    time.Time
}

// claimable: not dispatched, and not claimed by a pass whose lease holds.
func claimable(now time.Time) predicate.Outbox {
	return outbox.And(outbox.DispatchedAtIsNil(), outbox.Or(outbox.ClaimedUntilIsNil(), outbox.ClaimedUntilLT(now)))
}

// claim takes up to n claimable outbox rows, oldest first, for this pass
// and returns them. Without it every instance's dispatcher sent the same
// rows (three instances delivered 3,350 events 7,219 times): the
// conditional UPDATE lets one pass win each row, the others skip it.
func (s *Service) claim(ctx context.Context, n int) (claimOf, []*ent.Outbox, error) {
	c := claimOf{token: claimToken(), at: s.now()}
	ids, err := s.db.Client.Outbox.Query().Where(claimable(c.at)).Order(outbox.ByID()).Limit(n).IDs(ctx)
	if err != nil || len(ids) == 0 {
		return c, nil, store.Classify(errOr(err, "reading outbox"))
	}
	var won int
	// Two instances' claims may deadlock on MySQL: retried, as every
	// transaction is.
	err = store.Retry(ctx, func() (err error) {
		won, err = s.db.Client.Outbox.Update().Where(outbox.IDIn(ids...), claimable(c.at)).
			SetClaim(c.token).SetClaimedUntil(c.at.Add(ClaimLease)).Save(ctx)
		return err
	})
	if err != nil || won == 0 {
		return c, nil, store.Classify(errOr(err, "claiming outbox rows"))
	}
	// By id as well as token: claim has no index, and the token alone read
	// the whole outbox, dispatched rows and all.
	rows, err := s.db.Client.Outbox.Query().Where(outbox.IDIn(ids...), outbox.Claim(c.token)).Order(outbox.ByID()).All(ctx)
	if err != nil {
		return c, nil, store.Classify(fmt.Errorf("reading claimed outbox rows: %w", err))
	}
	return c, rows, nil
}

// settle marks the rows done dispatched and releases the claim on the rows
// left, so the next pass (of any instance) takes them at once. It returns
// how many rows it marked: fewer than done when the lease lapsed and
// another pass took some.
func (s *Service) settle(ctx context.Context, c claimOf, done, left []*ent.Outbox) (int, error) {
	n := 0
	if len(done) > 0 {
		var err error
		n, err = s.db.Client.Outbox.Update().Where(outbox.IDIn(rowIDs(done)...), outbox.Claim(c.token), outbox.DispatchedAtIsNil()).
			SetDispatchedAt(s.now()).Save(ctx)
		if err != nil {
			return 0, store.Classify(fmt.Errorf("marking events dispatched: %w", err))
		}
	}
	if len(left) > 0 {
		// Best effort: an unreleased claim lapses after ClaimLease.
		if _, err := s.db.Client.Outbox.Update().Where(outbox.IDIn(rowIDs(left)...), outbox.Claim(c.token)).
			ClearClaim().ClearClaimedUntil().Save(ctx); err != nil {
			return n, store.Classify(fmt.Errorf("releasing outbox rows: %w", err))
		}
	}
	return n, nil
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

// Backlog is what waits in the outbox: events not yet dispatched (a
// batch's row counts its events) and when the oldest was committed (zero
// when none waits). /metrics shows it: a broker that is down makes it grow.
func (s *Service) Backlog(ctx context.Context) (events int, oldest time.Time, err error) {
	// Plain SQL: SUM of no rows is NULL, which ent's typed aggregate will
	// not scan; the oldest is the first row by id (ids grow with time).
	if err := s.db.SQL.QueryRowContext(ctx, "SELECT COALESCE(SUM(events), 0) FROM outbox WHERE dispatched_at IS NULL").Scan(&events); err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	if events == 0 {
		return 0, time.Time{}, nil
	}
	first, err := s.db.Client.Outbox.Query().Where(outbox.DispatchedAtIsNil()).Order(outbox.ByID()).First(ctx)
	if ent.IsNotFound(err) { // dispatched in between
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, store.Classify(fmt.Errorf("reading the outbox backlog: %w", err))
	}
	return events, first.CreatedAt, nil
}
