package checkout

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/idempotency"
	"storefront/internal/platform/store"
)

// Idempotency record states.
const (
	statePending = "PENDING"
	stateDone    = "DONE"
)

// claim is a held idempotency key. lease (written truncated to the second, so
// it compares exactly on every backend) doubles as the owner's token: a
// request whose lease was taken over can neither finish nor release the key.
type claim struct {
	id    int64
	lease time.Time
}

// claimKey claims (user, key) for one request in its own short statement
// (committed at once), so a concurrent duplicate sees the claim immediately
// instead of waiting for the request to finish. It returns the claim, or the
// order number to replay when the same input already completed under this key.
func (s *Service) claimKey(ctx context.Context, user, key, hash string, keep time.Duration) (*claim, string, error) {
	c := s.db.Client.Idempotency
	for range 3 {
		now := s.now().Truncate(time.Second)
		lease := now.Add(s.cfg.Lease)
		// Insert first: a new key (the common case) costs one statement. A
		// duplicate fails on the unique (user, key) and reads what is there
		// (on MySQL the insert may wait for a running order transaction that
		// is marking the key DONE: milliseconds, never the whole request).
		r := &keyRecord{user: user, key: key, hash: hash, state: statePending, lease: lease, created: now, expires: now.Add(keep)}
		id, err := s.db.InsertID(ctx, s.db.Client, store.NewInsert(idempotency.Table).Row(r.write))
		if err == nil {
			return &claim{id: id, lease: lease}, "", nil
		}
		if !store.IsDuplicate(err) {
			return nil, "", store.Classify(fmt.Errorf("claiming idempotency key: %w", err))
		}
		row, err := c.Query().Where(idempotency.UserID(user), idempotency.Key(key)).Only(ctx)
		if ent.IsNotFound(err) {
			continue // released between our insert and read: try again
		}
		if err != nil {
			return nil, "", store.Classify(fmt.Errorf("reading idempotency key: %w", err))
		}
		switch keyStateOf(row, hash, now) {
		case keyTakeOver:
			// Take over a finished record past its retention, or a claim whose
			// request died, by CAS on what we saw: of several takers one wins.
			u := c.Update().Where(idempotency.ID(row.ID))
			if row.State == statePending {
				u = u.Where(idempotency.State(statePending), idempotency.LeaseUntilLT(now))
			} else {
				u = u.Where(idempotency.State(stateDone), idempotency.ExpiresAtLT(now))
			}
			n, err := u.SetRequestHash(hash).SetState(statePending).SetLeaseUntil(lease).
				SetExpiresAt(now.Add(keep)).ClearOrderSn().Save(ctx)
			if err != nil {
				return nil, "", store.Classify(fmt.Errorf("taking over idempotency key: %w", err))
			}
			if n == 1 {
				return &claim{id: row.ID, lease: lease}, "", nil
			}
		case keyReused:
			return nil, "", ErrIdempotencyKeyReused
		case keyReplay:
			return nil, *row.OrderSn, nil
		default:
			return nil, "", ErrIdempotencyInProgress
		}
	}
	return nil, "", ErrIdempotencyInProgress
}

// finish marks the claim DONE with the order number inside the order's
// transaction: the order and its record commit together or not at all.
func finish(ctx context.Context, tx *ent.Tx, c *claim, orderSn string) error {
	n, err := tx.Idempotency.Update().
		Where(idempotency.ID(c.id), idempotency.State(statePending), idempotency.LeaseUntil(c.lease)).
		SetState(stateDone).SetOrderSn(orderSn).Save(ctx)
	if err != nil {
		return fmt.Errorf("recording idempotency key: %w", err)
	}
	if n == 0 {
		// Our lease ran out and another request owns the key now.
		return ErrIdempotencyInProgress
	}
	return nil
}

// release gives the key back after a failed attempt, so a failure (say
// OUT_OF_STOCK) does not burn it and a later retry may succeed.
func (s *Service) release(ctx context.Context, c *claim) {
	del := func(ctx context.Context) {
		_, _ = s.db.Client.Idempotency.Delete().
			Where(idempotency.ID(c.id), idempotency.State(statePending), idempotency.LeaseUntil(c.lease)).
			Exec(ctx)
	}
	if ctx.Err() == nil {
		// Before answering, so a retry right after a refusal finds the key
		// free; bounded by the request's own deadline.
		del(ctx)
		return
	}
	// The request is over (usually: the database stalled). The client is not
	// held for this; a database that does not answer within the grace leaves
	// the claim to expire with its lease.
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		del(ctx)
	}()
}

// PurgeKeys deletes finished idempotency records past their retention and
// claims abandoned long ago (a live claim is never touched).
func (s *Service) PurgeKeys(ctx context.Context) (int, error) {
	now := s.now()
	n, err := s.db.Client.Idempotency.Delete().Where(idempotency.ExpiresAtLT(now),
		idempotency.Or(idempotency.State(stateDone), idempotency.LeaseUntilLT(now))).Exec(ctx)
	return n, store.Classify(err)
}

// IdempotencyClaim is a held idempotency key of another domain's creating
// mutation (requestAfterSale): the same claim, lease and record as
// placeOrder's, the record naming what was created (its number) once done.
type IdempotencyClaim struct{ c *claim }

// ClaimKey claims key of user for a request whose canonical input hashes to
// hash (which should name the operation, so that one key used for two
// operations is a reuse). It returns the claim, or the number recorded
// when the same input already finished under this key; errors are
// ErrIdempotencyInProgress and ErrIdempotencyKeyReused.
func (s *Service) ClaimKey(ctx context.Context, user, key, hash string) (*IdempotencyClaim, string, error) {
	c, done, err := s.claimKey(ctx, user, key, hash, s.cfg.Retention)
	if c == nil {
		return nil, done, err
	}
	return &IdempotencyClaim{c}, "", err
}

// FinishKeyTx records number as what the claim created, in the creating
// transaction: the thing and its record commit together or not at all.
func FinishKeyTx(ctx context.Context, tx *ent.Tx, c *IdempotencyClaim, number string) error {
	return finish(ctx, tx, c.c, number)
}

// ReleaseKey gives the key back after a failed attempt.
func (s *Service) ReleaseKey(ctx context.Context, c *IdempotencyClaim) { s.release(ctx, c.c) }
