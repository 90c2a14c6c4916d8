package listing_test

import (
	"context"
	"errors"
	"testing"

	"storefront/catalog"
	"storefront/demo"
	"storefront/errs"
	"storefront/internal/testdb"
	"storefront/listing"
	"storefront/store"
)

// A cursor is valid only for the sort that made it, its direction included:
// one from an ascending page reused on the descending listing of the same
// field (or the other way round) is INVALID_INPUT, never a page that skips
// or repeats goods (issue 25, section 7).
func TestCursorOfTheOtherDirectionIsRefused(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		cat := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(cat.Close)
		if _, err := demo.Seed(ctx, cat); err != nil {
			t.Fatal(err)
		}
		for _, sort := range []listing.Field{listing.ByID, listing.ByName, listing.ByPrice, listing.ByCreated, listing.BySales} {
			for _, desc := range []bool{false, true} {
				p, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: desc, First: 1})
				if err != nil || len(p.Cursors) != 1 || !p.HasNextPage {
					t.Fatalf("first page by %s desc=%v: %+v, %v; want one goods and more", sort, desc, p, err)
				}
				after := p.Cursors[0]
				if _, err := cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: desc, First: 1, After: after}); err != nil {
					t.Fatalf("the cursor by %s desc=%v on its own listing: %v", sort, desc, err)
				}
				_, err = cat.List(ctx, catalog.Viewer{}, catalog.ListParams{Sort: sort, Desc: !desc, First: 1, After: after})
				if !errors.Is(err, errs.InvalidInput) {
					t.Errorf("a cursor by %s desc=%v reused with desc=%v: %v, want INVALID_INPUT", sort, desc, !desc, err)
				}
			}
		}
	})
}
