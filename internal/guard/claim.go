package guard

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/internal/platform/store"
)

// A row claim takes rows of a table from a free state to a held one, each
// row by its own holder, all of them or none. The kind's owner names the
// table and what makes a row takeable. A claim comes before any stock row
// in the lock order (the plain path claims, then takes), so a batch and a
// plain order of the same row never wait for each other crosswise.

// RowClaimKind names a row claim's table and states.
type RowClaimKind struct {
	Table, ID, State, Holder string
	Free, Held               string
	// Takeable writes a row's further condition of being takeable at the
	// time of the take (its window of validity), nil for none.
	Takeable func(w store.Statement, at time.Time)
	// Lost is the error of a claim whose row was not free under its lock.
	Lost error
}

// RowClaim is what one transaction takes of a claim's kind: row IDs[i] by
// Holders[i], at At.
type RowClaim struct {
	Kind    *RowClaimKind
	IDs     []int64
	Holders []string
	At      time.Time
}

// update writes the claim's one conditional UPDATE: every row it names
// that is free and takeable becomes its holder's.
func (c *RowClaim) update(w store.Statement) {
	k := c.Kind
	w.SQL("UPDATE " + k.Table + " SET " + k.State + " = ")
	w.Str(k.Held)
	w.SQL(", " + k.Holder + " = CASE " + k.ID)
	for j, id := range c.IDs {
		w.SQL(" WHEN ")
		w.Int(id)
		w.SQL(" THEN ")
		w.Str(c.Holders[j])
	}
	w.SQL(" END WHERE " + k.ID + " IN (")
	for j, id := range c.IDs {
		if j > 0 {
			w.SQL(", ")
		}
		w.Int(id)
	}
	w.SQL(") AND " + k.State + " = ")
	w.Str(k.Free)
	if k.Takeable != nil {
		w.SQL(" AND ")
		k.Takeable(w, c.At)
	}
}

// ClaimLost is the error of a row claim that did not take every row it
// named: its kind's Lost.
type ClaimLost struct {
	Kind  *RowClaimKind
	IDs   []int64
	Taken int64
}

func (e *ClaimLost) Error() string {
	return fmt.Sprintf("%v: %d of %s %v were free to take", e.Kind.Lost, e.Taken, e.Kind.Table, e.IDs)
}

func (e *ClaimLost) Unwrap() error { return e.Kind.Lost }

// TakeRows takes claims in tx statement by statement (the plain path;
// SQLite's batch under its write lock): each takes every row it names, or
// it is a *ClaimLost and nothing of the transaction may commit.
func TakeRows(ctx context.Context, tx *ent.Tx, claims []RowClaim) error {
	for i := range claims {
		c := &claims[i]
		if len(c.IDs) == 0 {
			continue
		}
		var q store.Bound
		c.update(&q)
		res, err := tx.ExecContext(ctx, q.String(), q.Args...)
		if err != nil {
			return fmt.Errorf("taking %s %v: %w", c.Kind.Table, c.IDs, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n != int64(len(c.IDs)) {
			return &ClaimLost{Kind: c.Kind, IDs: c.IDs, Taken: n}
		}
	}
	return nil
}
