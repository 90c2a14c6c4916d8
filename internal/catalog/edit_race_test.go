package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Admins who loaded the same version and save at once: the CAS on
// goods.version lets exactly one through; the others write nothing.
func TestConcurrentSpecSavesOneWins(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		g := shirt(t, cat)
		const n = 8
		var (
			wg        sync.WaitGroup
			start     = make(chan struct{})
			fails     = make([]error, n)
			conflicts int
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				specs := form(g)
				specs[0].Values = append(specs[0].Values, catalog.ValueEdit{Name: fmt.Sprint("色", i)})
				<-start
				_, fails[i] = cat.UpdateSpecs(ctx, catalog.UpdateSpecsInput{GoodsID: g.ID, ExpectedVersion: g.Version,
					Specs: specs, DefaultSku: &catalog.SkuTerms{SellPrice: money.MustParse("1.00"), Stock: 1}})
			}()
		}
		close(start)
		wg.Wait()
		var wins int
		for _, err := range fails {
			switch {
			case err == nil:
				wins++
			case errors.Is(err, errs.VersionConflict):
				conflicts++
			default:
				t.Errorf("unexpected error: %v", err)
			}
		}
		if wins != 1 || conflicts != n-1 {
			t.Fatalf("%d saves won and %d conflicted, want 1 and %d", wins, conflicts, n-1)
		}
		if v := goodsRow(t, db, g.ID).Version; v != g.Version+1 {
			t.Errorf("goods version %d, want %d", v, g.Version+1)
		}
		if c := len(skusOf(t, db, g.ID)); c != 16 {
			t.Errorf("SKUs = %d, want 12 + the winner's 4", c)
		}
		if c := countRows(t, db); c.values != 7+1 {
			t.Errorf("spec values = %d, want 7 + the winner's 1", c.values)
		}
		ledgerBalances(t, db)
	})
}
