package catalog_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Goods created at once by many admins each commit: writing their listing
// rows must not make them deadlock on the end of the listing's indexes
// (which the store would retry, and then give up on as UNAVAILABLE).
func TestConcurrentCreatesAllCommit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		const workers, each = 12, 6
		errs := make([]error, workers*each)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				<-start
				for i := range each {
					n := w*each + i
					_, errs[n] = cat.Create(ctx, catalog.CreateInput{Name: fmt.Sprint("并发 ", n), Code: fmt.Sprint("RACE-", n),
						Status: enums.GoodsOnShelf, DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("1.00"), Stock: 1}})
				}
			})
		}
		close(start)
		wg.Wait()
		failed := 0
		for n, err := range errs {
			if err != nil {
				if failed++; failed <= 3 {
					t.Errorf("createGoods %d: %v", n, err)
				}
			}
		}
		if failed > 0 {
			t.Fatalf("%d of %d createGoods failed", failed, len(errs))
		}
		listed, err := db.Client.GoodsListing.Query().Count(ctx)
		must.NoErr(t, err)
		if listed != len(errs) {
			t.Fatalf("%d listing rows, want one per goods (%d)", listed, len(errs))
		}
	})
}
