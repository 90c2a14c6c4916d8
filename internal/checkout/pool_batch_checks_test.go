package checkout

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A pool batch may decide from the SKU as lastRead remembers it (MySQL):
// the check under the lock catches a SKU disabled since (SKU_UNAVAILABLE)
// and spec values renamed since (the line records the new text).
func TestPoolBatchChecksTheSKU(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db, path{"group", true})
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 100)
		p := f.newPool(t, id, 50, 5, -time.Minute)
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u1", Items: []ItemInput{fromPool(id, p.ID, 1)}}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec("UPDATE sku SET status = 'DISABLED' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Place(ctx, PlaceInput{UserID: "u2", Items: []ItemInput{fromPool(id, p.ID, 1)}}); !errors.Is(err, ErrSkuUnavailable) {
			t.Errorf("a pool order of a SKU disabled since the last batch: err = %v, want SKU_UNAVAILABLE", err)
		}
		if _, err := db.SQL.Exec("UPDATE sku SET status = 'ENABLED', spec_value_str = 'NEW' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
		o, err := f.svc.Place(ctx, PlaceInput{UserID: "u3", Items: []ItemInput{fromPool(id, p.ID, 1)}})
		if err != nil {
			t.Fatal(err)
		}
		var spec string
		if err := db.SQL.QueryRow("SELECT spec_value_str FROM order_line WHERE order_id = ?", o.ID).Scan(&spec); err != nil || spec != "NEW" {
			t.Errorf("line spec text %q (%v), want NEW", spec, err)
		}
	})
}

// A flash sale where 200 buyers reached the limit before this process knew
// them (their counters written elsewhere): their orders are refused, and
// every new buyer's order is placed. Their first batch each fails the
// check under the lock and runs again reading the counters; that rerun once
// locked the pool's row before the batch's inserts and deadlocked with the
// batch in flight (28 and 32 of 1500 new buyers' orders failed on MariaDB).
func TestPoolBuyersAtTheLimitDoNotFailOthers(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.skuID(t, "黑色,L")
		f.ledgerStock(t, id, 6000)
		p := f.newPool(t, id, 5000, 2, -time.Minute)
		for i := range 200 {
			if _, err := db.SQL.Exec("INSERT INTO pool_buyer (pool_id, user_id, units) VALUES (?, ?, 2)", p.ID, fmt.Sprint("full", i)); err != nil {
				t.Fatal(err)
			}
		}
		var placed atomic.Int64
		var mu sync.Mutex
		other := map[string]int{}
		race(2000, 64, func(i int) {
			user := fmt.Sprint("new", i)
			if i%4 == 0 {
				user = fmt.Sprint("full", i%200)
			}
			_, err := f.svc.Place(ctx, PlaceInput{UserID: user, IdempotencyKey: fmt.Sprint("k", i), Items: []ItemInput{fromPool(id, p.ID, 1)}})
			switch {
			case err == nil:
				placed.Add(1)
			case errors.Is(err, inventory.ErrPoolLimitExceeded) && i%4 == 0:
			default:
				mu.Lock()
				other[err.Error()]++
				mu.Unlock()
			}
		})
		for k, n := range other {
			t.Errorf("%d × %s", n, k)
		}
		if placed.Load() != 1500 {
			t.Errorf("%d new buyers' orders placed, want 1500", placed.Load())
		}
		f.poolsBalance(t)
	})
}
