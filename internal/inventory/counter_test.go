package inventory

import (
	"context"
	"errors"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/ent/poolbuyer"
	"storefront/internal/guard"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// errTestLimit is the test kind's own answer past its limit.
var errTestLimit = errs.New(errs.Conflict, "the test counter's limit would be passed")

// testCounter is a counter kind that is not the pools': one definition, no
// renderer of its own in any engine (it borrows pool_buyer's table, whose scope no pool
// uses here).
var testCounter = &guard.CounterKind{Table: poolbuyer.Table, Scope: poolbuyer.FieldPoolID, Holder: poolbuyer.FieldUserID,
	Units: poolbuyer.FieldUnits, Exceeded: errTestLimit}

// A guarded counter of a new kind holds its limit on every path with no
// code but its definition: 24 concurrent transactions each add one unit for
// one holder (and one each for a holder of its own) under a limit of 5, on
// the plain path and through the dialect's batch engine; exactly 5 commit,
// the others answer the kind's error (plain) or ErrMoved (a batch's guard),
// and the row says 5.
func TestCounterKindHoldsItsLimitOnEveryEngine(t *testing.T) {
	const limit, buyers = 5, 24
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		paths := map[string]func(ctx context.Context, c guard.Counter) error{
			"plain": func(ctx context.Context, c guard.Counter) error {
				return store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error { return guard.AddCounters(ctx, tx, []guard.Counter{c}) })
			},
		}
		if e := engineOf(db.Kind); e != nil {
			paths["batch"] = func(ctx context.Context, c guard.Counter) error {
				return store.Retry(ctx, func() error {
					return db.OnConn(ctx, func(ctx context.Context, conn *store.Conn) error {
						_, err := e.Write(ctx, conn, &Batch{StockWrite: StockWrite{Counters: []guard.Counter{c}}, Begin: true})
						return err
					})
				})
			}
		} else {
			paths["batch"] = func(ctx context.Context, c guard.Counter) error {
				return store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
					return WriteLocked(ctx, tx, StockWrite{Counters: []guard.Counter{c}}, nil)
				})
			}
		}
		scope := int64(900)
		for name, add := range paths {
			scope++
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				var wg sync.WaitGroup
				var mu sync.Mutex
				var ok, refused int
				for i := range buyers {
					wg.Go(func() {
						own := "buyer-" + string(rune('a'+i))
						err := add(ctx, guard.Counter{Kind: testCounter, Scope: scope, Holders: []string{"hot", own}, Adds: []int64{1, 1}, Limit: limit})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							ok++
						case errors.Is(err, errTestLimit), errors.Is(err, ErrMoved):
							refused++
						default:
							t.Errorf("adding: %v", err)
						}
					})
				}
				wg.Wait()
				var units []int64
				rows, err := db.SQL.QueryContext(ctx, "SELECT units FROM pool_buyer WHERE pool_id = ? AND user_id = 'hot'", scope)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var u int64
					if err := rows.Scan(&u); err != nil {
						t.Fatal(err)
					}
					units = append(units, u)
				}
				rows.Close()
				var others int64
				if err := db.SQL.QueryRowContext(ctx, "SELECT COALESCE(SUM(units), 0) FROM pool_buyer WHERE pool_id = ? AND user_id <> 'hot'", scope).Scan(&others); err != nil {
					t.Fatal(err)
				}
				if ok != limit || refused != buyers-limit || len(units) != 1 || units[0] != limit || others != limit {
					t.Errorf("%d committed, %d refused, the hot holder's row %v, the others' %d; want %d, %d, [%d], %d",
						ok, refused, units, others, limit, buyers-limit, limit, limit)
				}
			})
		}
	})
}
