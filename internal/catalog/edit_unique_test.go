package catalog

import (
	"context"
	"errors"
	"sync"
	"testing"

	"storefront/ent"
	"storefront/ent/sku"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

// Two writers that both decided a combination is new (two creates, or an
// edit racing an import) cannot both insert it: the unique key on
// (goods_id, spec_key) refuses all but one, inside their transactions, and
// the loser's whole transaction (its ledger row too) rolls back.
func TestSpecKeyRaceOneSkuWins(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := New(db, DefaultConfig())
		g, err := s.Create(ctx, CreateInput{Name: "race", Status: enums.GoodsOnShelf, DefaultSku: SkuTerms{SellPrice: 100}})
		if err != nil || g == nil {
			t.Fatalf("Create = %v, %v", g, err)
		}
		const n = 8
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			fails = make([]error, n)
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				fails[i] = store.WithTx(ctx, db, func(ctx context.Context, tx *ent.Tx) error {
					p := plannedSku{terms: SkuTerms{SellPrice: 100, Stock: 5}, enabled: true}
					rows, err := createSkus(ctx, tx, []*ent.SkuCreate{newSku(tx, g.ID, []int64{7001, 7002}, []string{"a", "b"}, p)})
					if err != nil {
						return err
					}
					return bookOpening(ctx, tx, rows, []int64{p.terms.Stock})
				})
			}()
		}
		close(start)
		wg.Wait()
		var wins int
		for _, err := range fails {
			if err == nil {
				wins++
			} else if !errors.Is(err, errs.VersionConflict) {
				t.Errorf("loser's error = %v, want errs.VersionConflict", err)
			}
		}
		if wins != 1 {
			t.Errorf("%d writers inserted the combination, want exactly 1", wins)
		}
		rows, err := db.Client.Sku.Query().Where(sku.GoodsID(g.ID), sku.SpecKey("7001_7002")).All(ctx)
		must.NoErr(t, err)
		if len(rows) != 1 {
			t.Fatalf("SKUs with spec key 7001_7002: %d", len(rows))
		}
		c, err := db.Client.StockLog.Query().Count(ctx)
		must.NoErr(t, err)
		if c != 2 {
			t.Errorf("ledger rows = %d, want the default SKU's and the winner's opening rows", c)
		}
	})
}
