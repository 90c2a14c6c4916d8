package outbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"entgo.io/ent/dialect/sql"

	entoutbox "storefront/ent/outbox"
	"storefront/ent/predicate"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// Claimers racing over the same rows never both take one: eight claims,
// each over a window of 20 outbox rows that overlaps its neighbours'
// (started together, so their UPDATEs meet on the shared rows, and on
// MySQL may deadlock and be retried), win every row of the 55 between
// them, each row once, in each lane; the rows a claim says it won are the
// rows its token marks. The webhooks' sender claims its deliveries with
// the same Lease (webhooks' TestClaimersNeverShareADelivery).
func TestLeaseGivesEachRowToOneClaimer(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		const rows, claimers, window, step = 55, 8, 20, 5
		emitN(t, db, rows)
		ids, err := db.Client.Outbox.Query().Order(entoutbox.ByID()).IDs(ctx)
		if err != nil || len(ids) != rows {
			t.Fatalf("outbox ids: %d, %v", len(ids), err)
		}
		for _, lane := range Lanes {
			now := time.Now()
			claims, won := make([]Lease, claimers), make([]int, claimers)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range claimers {
				claims[i] = NewLease(fmt.Sprint("i", i), now, now.Add(ClaimLease))
				mine := ids[i*step : min(i*step+window, rows)]
				wg.Go(func() {
					<-start
					n, err := lane.lease().Take(ctx, claims[i], func(ctx context.Context, set func(*sql.UpdateBuilder)) (int, error) {
						return db.Client.Outbox.Update().Where(entoutbox.IDIn(mine...), lane.claimable(now)).Modify(set).Save(ctx)
					})
					if err != nil {
						t.Errorf("%s: claim %d: %v", lane, i, err)
					}
					won[i] = n
				})
			}
			close(start)
			wg.Wait()
			total := 0
			for i, c := range claims {
				total += won[i]
				marked, err := db.Client.Outbox.Query().Where(predicate.Outbox(lane.lease().Of(c.Token))).Count(ctx)
				if err != nil || marked != won[i] {
					t.Errorf("%s: claim %d won %d rows, its token marks %d (%v)", lane, i, won[i], marked, err)
				}
			}
			if total != rows {
				t.Errorf("%s: the claims won %d rows between them, want each of %d once", lane, total, rows)
			}
			// Claimed, the rows are no one else's until the lease lapses.
			late := NewLease("late", now, now.Add(ClaimLease))
			n, err := lane.lease().Take(ctx, late, func(ctx context.Context, set func(*sql.UpdateBuilder)) (int, error) {
				return db.Client.Outbox.Update().Where(entoutbox.IDIn(ids...), lane.claimable(now.Add(ClaimLease/2))).Modify(set).Save(ctx)
			})
			if n != 0 || err != nil {
				t.Errorf("%s: a claim within the lease took %d rows, %v; want none", lane, n, err)
			}
		}
	})
}
