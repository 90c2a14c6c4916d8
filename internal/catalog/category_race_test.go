package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Tree changes racing each other: whatever the interleaving, every check
// (cycle, depth, children) holds, of two changes that cannot both hold one
// is refused with INVALID_INPUT, and afterwards every path ends at a root.
// On MariaDB under REPEATABLE READ the checks once read the tree without a
// lock, and crosswise moves both committed (14-15 of 15 tries): a loop.

// race runs fns at once (released together) and returns their errors.
func race(fns []func() error) []error {
	out := make([]error, len(fns))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			<-start
			out[i] = fn()
		})
	}
	close(start)
	wg.Wait()
	return out
}

// oneOfTwo checks that exactly one of a pair of changes that cannot both
// hold committed and the other was refused as INVALID_INPUT.
func oneOfTwo(t *testing.T, what string, a, b error) {
	t.Helper()
	switch {
	case a == nil && b == nil:
		t.Errorf("%s: both committed", what)
	case a != nil && b != nil:
		t.Errorf("%s: both refused: %v; %v", what, a, b)
	case !errors.Is(cmpOr(a, b), errs.InvalidInput):
		t.Errorf("%s: the refused one: %v, want INVALID_INPUT", what, cmpOr(a, b))
	}
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// treeHolds reads the category rows as stored and checks every category's
// path reaches a root within listing.MaxDepth levels and no category has
// more than catalog.MaxChildren children. The walk is bounded: a loop is
// reported, never followed forever.
func treeHolds(t *testing.T, db *store.DB) {
	t.Helper()
	rows, err := db.Client.Category.Query().All(context.Background())
	must.NoErr(t, err)
	parent := map[int64]*int64{}
	children := map[int64]int{}
	for _, r := range rows {
		parent[r.ID] = r.ParentID
		if r.ParentID != nil {
			children[*r.ParentID]++
		}
	}
	for _, r := range rows {
		levels, k := 0, &r.ID
		for ; k != nil && levels <= len(rows); k = parent[*k] {
			levels++
		}
		if k != nil {
			t.Errorf("category %d: its path never reaches a root (a loop)", r.ID)
		} else if levels > listing.MaxDepth {
			t.Errorf("category %d is %d levels deep, more than %d", r.ID, levels, listing.MaxDepth)
		}
	}
	for id, n := range children {
		if n > catalog.MaxChildren {
			t.Errorf("category %d has %d children, more than %d", id, n, catalog.MaxChildren)
		}
	}
}

func newCategory(t *testing.T, s *catalog.Service, name string, parent *int64) *catalog.Category {
	t.Helper()
	c, err := s.CreateCategory(context.Background(), catalog.CategoryInput{Name: name, ParentID: parent})
	must.NoErr(t, err)
	return c
}

// 12 goroutines, 6 pairs of roots, each pair moved crosswise at once (A
// under B and B under A), 5 rounds: exactly one move of each pair commits.
func TestCrosswiseMovesNeverBothCommit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		const pairs, rounds = 6, 5
		var a, b [pairs]*catalog.Category
		for i := range pairs {
			a[i], b[i] = newCategory(t, s, fmt.Sprint("A", i), nil), newCategory(t, s, fmt.Sprint("B", i), nil)
		}
		for round := range rounds {
			for i := range pairs {
				for _, k := range []*catalog.Category{a[i], b[i]} {
					_, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: k.ID, ToRoot: true})
					must.NoErr(t, err)
				}
			}
			var fns []func() error
			for i := range pairs {
				for _, m := range [][2]*catalog.Category{{a[i], b[i]}, {b[i], a[i]}} {
					fns = append(fns, func() error {
						_, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: m[0].ID, ParentID: &m[1].ID})
						return err
					})
				}
			}
			got := race(fns)
			for i := range pairs {
				oneOfTwo(t, fmt.Sprintf("round %d: A%d under B%d and B%d under A%d", round, i, i, i, i), got[2*i], got[2*i+1])
			}
			treeHolds(t, db)
			if t.Failed() {
				return
			}
		}
	})
}

// Two moves that each keep the tree within 5 levels but together make it 7:
// Q (with Q2) under P3 of P1 › P2 › P3, and R (with R2) under Q2. Six
// groups, 12 goroutines at once: one move of each group commits.
func TestRacingMovesKeepTheDepth(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		const groups = 6
		var fns []func() error
		for g := range groups {
			p1 := newCategory(t, s, fmt.Sprint("P1-", g), nil)
			p2 := newCategory(t, s, fmt.Sprint("P2-", g), &p1.ID)
			p3 := newCategory(t, s, fmt.Sprint("P3-", g), &p2.ID)
			q := newCategory(t, s, fmt.Sprint("Q-", g), nil)
			q2 := newCategory(t, s, fmt.Sprint("Q2-", g), &q.ID)
			r := newCategory(t, s, fmt.Sprint("R-", g), nil)
			newCategory(t, s, fmt.Sprint("R2-", g), &r.ID)
			fns = append(fns, func() error {
				_, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: q.ID, ParentID: &p3.ID})
				return err
			}, func() error {
				_, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: r.ID, ParentID: &q2.ID})
				return err
			})
		}
		got := race(fns)
		for g := range groups {
			oneOfTwo(t, fmt.Sprintf("group %d: Q under P3 and R under Q2", g), got[2*g], got[2*g+1])
		}
		treeHolds(t, db)
	})
}

// A parent with 94 children and 12 creates under it at once: 6 commit, 6
// are refused, and it ends with exactly 100.
func TestRacingCreatesKeepTheChildrenLimit(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		const racers, free = 12, 6
		p := newCategory(t, s, "Parent", nil)
		for i := range catalog.MaxChildren - free {
			newCategory(t, s, fmt.Sprint("Child ", i), &p.ID)
		}
		var fns []func() error
		for i := range racers {
			fns = append(fns, func() error {
				_, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: fmt.Sprint("Racer ", i), ParentID: &p.ID})
				return err
			})
		}
		committed := 0
		for i, err := range race(fns) {
			switch {
			case err == nil:
				committed++
			case !errors.Is(err, errs.InvalidInput):
				t.Errorf("racer %d: %v, want INVALID_INPUT or success", i, err)
			}
		}
		if committed != free {
			t.Errorf("%d creates committed, want %d (the room left under the limit)", committed, free)
		}
		kids, err := s.Children(ctx, p)
		must.NoErr(t, err)
		if len(kids) != catalog.MaxChildren {
			t.Errorf("the parent has %d children, want %d", len(kids), catalog.MaxChildren)
		}
		treeHolds(t, db)
	})
}

// Goods edits that put goods into a category at the same moment as that
// category's parent moves: every goods ends listed under the tree as it is
// after both (listing.Reconcile finds nothing), round after round. A goods
// edit once read the tree of its snapshot, from before the move, while the
// move's own read of the goods missed the goods not yet committed: 19 of
// 20 rounds left stale rows on MariaDB.
func TestGoodsEditsRacingAMoveAreRelisted(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		a := newCategory(t, s, "A", nil)
		b := newCategory(t, s, "B", &a.ID)
		c := newCategory(t, s, "C", &b.ID)
		d := newCategory(t, s, "D", nil)
		var ids []int64
		for i := range 6 {
			g, err := s.Create(ctx, catalog.CreateInput{Name: fmt.Sprint("Goods ", i), Code: fmt.Sprint("MOVE-", i), Status: enums.GoodsOnShelf,
				CategoryID: &a.ID, DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("5.00"), Stock: 1}})
			must.NoErr(t, err)
			ids = append(ids, g.ID)
		}
		for round := range 10 {
			// Even rounds: goods from A into C while B moves under D; odd
			// rounds: goods back into A while B moves back under A.
			into, under := c.ID, d.ID
			if round%2 == 1 {
				into, under = a.ID, a.ID
			}
			var fns []func() error
			for _, id := range ids {
				v, err := s.Goods(ctx, catalog.Viewer{Admin: true}, id)
				must.NoErr(t, err)
				fns = append(fns, func() error {
					_, err := s.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: id, ExpectedVersion: v.Version, CategoryID: &into})
					return err
				})
			}
			fns = append(fns, func() error {
				_, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: b.ID, ParentID: &under})
				return err
			})
			for i, err := range race(fns) {
				if err != nil {
					t.Errorf("round %d, change %d: %v", round, i, err)
				}
			}
			noDiffs(t, db, fmt.Sprint("round ", round))
			if t.Failed() {
				return
			}
		}
	})
}

// Creates racing for one slug: 12 categories named alike, no slug given,
// all commit, one with the slug made from the name and the others with
// category-<id> (a made slug is never a refusal); 12 giving one slug by
// hand: one commits, 11 are refused with INVALID_INPUT.
func TestRacingCreatesKeepSlugsUnique(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		newCategory(t, s, "Root", nil) // an empty table only has a gap to lock (category_lock.go)
		const racers = 12
		made := make([]*catalog.Category, racers)
		var fns []func() error
		for i := range racers {
			fns = append(fns, func() (err error) {
				made[i], err = s.CreateCategory(ctx, catalog.CategoryInput{Name: "Shoes"})
				return err
			})
		}
		named := 0
		for i, err := range race(fns) {
			switch {
			case err != nil:
				t.Errorf("create %d of Shoes without a slug: %v", i, err)
			case made[i].Slug == "shoes":
				named++
			case made[i].Slug != "category-"+itoa(made[i].ID):
				t.Errorf("create %d: slug %q, want shoes or category-%d", i, made[i].Slug, made[i].ID)
			}
		}
		if named != 1 && !t.Failed() {
			t.Errorf("%d categories got the slug shoes, want 1", named)
		}
		fns = nil
		for i := range racers {
			fns = append(fns, func() error {
				_, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: fmt.Sprint("Boots ", i), Slug: new("boots")})
				return err
			})
		}
		committed := 0
		for i, err := range race(fns) {
			switch {
			case err == nil:
				committed++
			case !errors.Is(err, errs.InvalidInput):
				t.Errorf("create %d with the slug boots: %v, want INVALID_INPUT or success", i, err)
			}
		}
		if committed != 1 {
			t.Errorf("%d creates with the slug boots committed, want 1", committed)
		}
	})
}
