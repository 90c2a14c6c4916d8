package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ErrTreeLoop: walking the stored tree came back to a category it had
// passed. The tree checks refuse every change that would make one, so a
// loop was written by hand or by a version before the tree lock; it is
// answered INTERNAL (it wraps no category of errs), its message names the
// categories, and `storefront reconcile` reports it (CheckTree). Moving one
// of the loop to the root, or under a category outside it, repairs it.
var ErrTreeLoop = errors.New("the category tree has a loop")

// Every walk below is iterative and stops at a category it has seen: on
// any data, also data written by hand, a walk ends (it once recursed
// without end on a loop, and the process died of a stack overflow).

// up is k's path from k up to its root, k first. A walk that comes back to
// a category it passed returns the loop too (from that category round to
// it again); up then holds the categories walked before the loop closed.
// A parent id that names no category ends the walk as a root would.
func (t *tree) up(k *Category) (up, loop []*Category) {
	for n := k; n != nil; {
		if i := slices.Index(up, n); i >= 0 {
			return up, append(slices.Clone(up[i:]), n)
		}
		up = append(up, n)
		if n.ParentID == nil {
			break
		}
		n = t.byID[*n.ParentID]
	}
	return up, nil
}

// pathOf is k's ancestors from the root down to k, or ErrTreeLoop.
func (t *tree) pathOf(k *Category) ([]*Category, error) {
	up, loop := t.up(k)
	if loop != nil {
		return nil, loopError(k, loop)
	}
	slices.Reverse(up)
	return up, nil
}

// below is id and every category under it, and how many levels that is
// (id's own included), as the tree will be once id is cut from its
// parent: an edge back to id is the one a move of id replaces, so it is
// not followed. As every category has one parent, only such an edge can
// close a loop below id; any other category met twice is still refused.
func (t *tree) below(id int64) (ids []int64, height int, err error) {
	seen := map[int64]bool{id: true}
	level := []int64{id}
	for len(level) > 0 {
		ids, height = append(ids, level...), height+1
		var next []int64
		for _, p := range level {
			for _, c := range t.children[p] {
				if c.ID == id {
					continue
				}
				if seen[c.ID] {
					return nil, 0, fmt.Errorf("%w: category %d is met twice below category %d", ErrTreeLoop, c.ID, id)
				}
				seen[c.ID] = true
				next = append(next, c.ID)
			}
		}
		level = next
	}
	return ids, height, nil
}

// loopError names the loop k's path ran into ("…: categories 7 › 8 › 7"),
// and k when it is not one of them.
func loopError(k *Category, loop []*Category) error {
	if !slices.Contains(loop, k) {
		return fmt.Errorf("%w: the path of category %d runs into categories %s", ErrTreeLoop, k.ID, names(loop))
	}
	return fmt.Errorf("%w: categories %s", ErrTreeLoop, names(loop))
}

func names(ks []*Category) string {
	ids := make([]string, len(ks))
	for i, k := range ks {
		ids[i] = strconv.FormatInt(k.ID, 10)
	}
	return strings.Join(ids, " › ")
}
