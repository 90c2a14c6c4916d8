package catalog_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"storefront/ent/goodslisting"
	"storefront/internal/catalog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// A move under its own child in a two-level tree: only the cycle check can
// refuse it (2 + 2 levels is within the depth limit), and nothing changes.
func TestMoveUnderOwnChildInAShallowTree(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		a := newCategory(t, s, "A", nil)
		b := newCategory(t, s, "B", &a.ID)
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: a.ID, ParentID: &b.ID}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("A under its child B: %v, want INVALID_INPUT", err)
		}
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: b.ID, ParentID: &b.ID}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("B under itself: %v, want INVALID_INPUT", err)
		}
		row, err := db.Client.Category.Get(ctx, a.ID)
		must.NoErr(t, err)
		if row.ParentID != nil {
			t.Errorf("A's parent is %d after the refused move, want none", *row.ParentID)
		}
		treeHolds(t, db)
	})
}

// scopesOf is the listing scopes of a goods as stored, sorted.
func scopesOf(t *testing.T, db *store.DB, id int64) []int64 {
	t.Helper()
	rows, err := db.Client.GoodsListing.Query().Where(goodslisting.GoodsID(id)).All(context.Background())
	must.NoErr(t, err)
	var out []int64
	for _, r := range rows {
		out = append(out, r.Scope)
	}
	slices.Sort(out)
	return out
}

func noDiffs(t *testing.T, db *store.DB, step string) {
	t.Helper()
	diffs, err := listing.Reconcile(context.Background(), db.Client, 100)
	must.NoErr(t, err)
	for _, d := range diffs {
		t.Errorf("%s: %s", step, d)
	}
}

// Goods two levels below a moved category are re-listed in the move's
// transaction: A › B › C with a goods in C, B moved under D. The goods is
// then listed under C, B and D, no longer under A.
func TestMoveRelistsGoodsInSubcategories(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		a := newCategory(t, s, "A", nil)
		b := newCategory(t, s, "B", &a.ID)
		c := newCategory(t, s, "C", &b.ID)
		d := newCategory(t, s, "D", nil)
		g, err := s.Create(ctx, catalog.CreateInput{Name: "袜子", Code: "SOCK", Status: enums.GoodsOnShelf, CategoryID: &c.ID,
			DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("5.00"), Stock: 1}})
		must.NoErr(t, err)
		if got, want := scopesOf(t, db, g.ID), []int64{0, a.ID, b.ID, c.ID}; !slices.Equal(got, want) {
			t.Fatalf("scopes before the move %v, want %v", got, want)
		}
		_, err = s.UpdateCategory(ctx, catalog.CategoryEdit{ID: b.ID, ParentID: &d.ID})
		must.NoErr(t, err)
		if got, want := scopesOf(t, db, g.ID), []int64{0, b.ID, c.ID, d.ID}; !slices.Equal(got, want) {
			t.Errorf("scopes after B moved under D %v, want %v", got, want)
		}
		noDiffs(t, db, "B under D")
	})
}

// A loop written by hand (or by an older version): walking the tree ends
// with an error naming the categories (INTERNAL: it wraps no category of
// errs), never a stack overflow; the tree check reports it; the listing
// check reports the goods inside it instead of failing; and moving one of
// the loop to the root through the API repairs it.
func TestALoopWrittenByHand(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		a := newCategory(t, s, "A", nil)
		b := newCategory(t, s, "B", &a.ID)
		other := newCategory(t, s, "Other", nil)
		g, err := s.Create(ctx, catalog.CreateInput{Name: "帽子", Code: "HAT", Status: enums.GoodsOnShelf, CategoryID: &b.ID,
			DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("5.00"), Stock: 1}})
		must.NoErr(t, err)
		if _, err := db.SQL.ExecContext(ctx, "UPDATE category SET parent_id = ? WHERE id = ?", b.ID, a.ID); err != nil {
			t.Fatal(err)
		}
		s.Close()
		s = catalog.New(db, catalog.DefaultConfig()) // no tree kept from before the write
		t.Cleanup(s.Close)

		loop := func(what string, err error) {
			t.Helper()
			switch {
			case err == nil:
				t.Errorf("%s: no error, want the loop", what)
			case !errors.Is(err, catalog.ErrTreeLoop):
				t.Errorf("%s: %v, want catalog.ErrTreeLoop", what, err)
			case errors.Is(err, errs.InvalidInput) || errors.Is(err, errs.NotFound):
				t.Errorf("%s: %v wraps a client error's category, want INTERNAL", what, err)
			case !strings.Contains(err.Error(), itoa(a.ID)) || !strings.Contains(err.Error(), itoa(b.ID)):
				t.Errorf("%s: %q does not name categories %d and %d", what, err, a.ID, b.ID)
			}
		}
		_, err = s.Path(ctx, b)
		loop("the path of B", err)
		_, err = s.UpdateCategory(ctx, catalog.CategoryEdit{ID: other.ID, ParentID: &b.ID})
		loop("a move of Other under B", err)
		_, err = s.CreateCategory(ctx, catalog.CategoryInput{Name: "New", ParentID: &a.ID})
		loop("a create under A", err)
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: a.ID, Name: new("A renamed")}); err != nil {
			t.Errorf("a rename of A, which walks nothing: %v", err)
		}

		faults, err := catalog.CheckTree(ctx, db.Client)
		must.NoErr(t, err)
		if len(faults) != 1 || !strings.Contains(faults[0].String(), itoa(a.ID)) || !strings.Contains(faults[0].String(), itoa(b.ID)) {
			t.Errorf("tree check: %v, want one fault naming the loop of %d and %d", faults, a.ID, b.ID)
		}
		diffs, err := listing.Reconcile(ctx, db.Client, 100)
		must.NoErr(t, err)
		if len(diffs) != 1 || diffs[0].GoodsID != g.ID || diffs[0].Column != "category" {
			t.Errorf("listing check: %v, want one finding: goods %d's category", diffs, g.ID)
		}

		// The repair: A to the root, B stays under it.
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: a.ID, ToRoot: true}); err != nil {
			t.Fatalf("moving A to the root: %v", err)
		}
		treeHolds(t, db)
		path, err := s.Path(ctx, b)
		must.NoErr(t, err)
		if len(path) != 2 || path[0].ID != a.ID || path[1].ID != b.ID {
			t.Errorf("B's path after the repair %+v, want A › B", path)
		}
		faults, err = catalog.CheckTree(ctx, db.Client)
		must.NoErr(t, err)
		if len(faults) != 0 {
			t.Errorf("tree check after the repair: %v", faults)
		}
		noDiffs(t, db, "after the repair")
	})
}

// A tree deeper than the limit, written by hand: the tree check reports it,
// the listing check reports the goods below the limit, nothing fails.
func TestATooDeepTreeWrittenByHand(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		var chain []*catalog.Category
		var parent *int64
		for _, name := range []string{"L1", "L2", "L3", "L4", "L5"} {
			chain = append(chain, newCategory(t, s, name, parent))
			parent = &chain[len(chain)-1].ID
		}
		top := newCategory(t, s, "Top", nil)
		g, err := s.Create(ctx, catalog.CreateInput{Name: "鞋", Code: "SHOE", Status: enums.GoodsOnShelf, CategoryID: &chain[4].ID,
			DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("5.00"), Stock: 1}})
		must.NoErr(t, err)
		if _, err := db.SQL.ExecContext(ctx, "UPDATE category SET parent_id = ? WHERE id = ?", top.ID, chain[0].ID); err != nil {
			t.Fatal(err)
		}
		faults, err := catalog.CheckTree(ctx, db.Client)
		must.NoErr(t, err)
		if len(faults) != 1 || !strings.Contains(faults[0].String(), itoa(chain[4].ID)) {
			t.Errorf("tree check: %v, want one fault: category %d is 6 levels deep", faults, chain[4].ID)
		}
		diffs, err := listing.Reconcile(ctx, db.Client, 100)
		must.NoErr(t, err)
		if len(diffs) != 1 || diffs[0].GoodsID != g.ID || diffs[0].Column != "category" {
			t.Errorf("listing check: %v, want one finding: goods %d's category", diffs, g.ID)
		}
	})
}
