package catalog

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"

	"storefront/ent"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
)

// TreeFault is one way the stored category tree breaks what the tree
// checks keep: a loop, a category too deep, a parent with too many
// children, a parent id that names no category.
type TreeFault struct {
	Category int64
	Problem  string
}

func (f TreeFault) String() string {
	if f.Category == 0 { // the tree as a whole, or its roots
		return f.Problem
	}
	return fmt.Sprintf("category %d: %s", f.Category, f.Problem)
}

// CheckTree reads the category table and reports what breaks the tree's
// rules, for `storefront reconcile`. It corrects nothing (a move through
// the API does: one of a loop to the root, say). Each category is walked
// once, whatever the rows say.
func CheckTree(ctx context.Context, c *ent.Client) ([]TreeFault, error) {
	rows, err := c.Category.Query().All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading categories: %w", err))
	}
	t := treeOf(rows)
	var faults []TreeFault
	add := func(id int64, format string, args ...any) {
		faults = append(faults, TreeFault{Category: id, Problem: fmt.Sprintf(format, args...)})
	}
	if len(rows) > MaxCategories {
		add(0, "%d categories, at most %d", len(rows), MaxCategories)
	}
	// depth: levels of a category's path once known; walking while its
	// walk is under way, broken when the path never reaches a root (then
	// loop names the loop it is in or runs into).
	const walking, broken = -1, -2
	depth := map[int64]int{}
	loop := map[int64]string{}
	for _, id := range slices.Sorted(maps.Keys(t.byID)) {
		var walk []*Category
		base := 0
		for n := t.byID[id]; n != nil; {
			if d, seen := depth[n.ID]; seen {
				if d == walking { // the walk came back to n: a loop
					i := slices.Index(walk, n)
					ring := ringFrom(walk[i:])
					add(ring[0].ID, "categories %s form a loop", names(append(ring, ring[0])))
					for _, k := range walk[i:] {
						depth[k.ID], loop[k.ID] = broken, names(ring)
					}
					walk, d = walk[:i], broken
				}
				if d == broken {
					for _, k := range walk {
						depth[k.ID], loop[k.ID] = broken, loop[n.ID]
						add(k.ID, "its path runs into the loop of categories %s", loop[n.ID])
					}
					walk = nil
				}
				base = d
				break
			}
			depth[n.ID] = walking
			walk = append(walk, n)
			if n.ParentID == nil {
				break
			}
			p := t.byID[*n.ParentID]
			if p == nil {
				add(n.ID, "its parent %d does not exist", *n.ParentID)
			}
			n = p
		}
		for i, k := range slices.Backward(walk) {
			depth[k.ID] = base + len(walk) - i
			if depth[k.ID] > listing.MaxDepth {
				add(k.ID, "%d levels deep, at most %d", depth[k.ID], listing.MaxDepth)
			}
		}
	}
	for p, kids := range t.children {
		switch {
		case len(kids) <= MaxChildren:
		case p == 0:
			add(0, "%d roots, at most %d", len(kids), MaxChildren)
		default:
			add(p, "%d children, at most %d", len(kids), MaxChildren)
		}
	}
	slices.SortFunc(faults, func(a, b TreeFault) int {
		return cmp.Or(cmp.Compare(a.Category, b.Category), cmp.Compare(a.Problem, b.Problem))
	})
	return faults, nil
}

// ringFrom turns a loop walked child to parent so that it starts at its
// smallest id: one loop reads the same from wherever it was found.
func ringFrom(ks []*Category) []*Category {
	i := 0
	for j, k := range ks {
		if k.ID < ks[i].ID {
			i = j
		}
	}
	return append(slices.Clone(ks[i:]), ks[:i]...)
}
