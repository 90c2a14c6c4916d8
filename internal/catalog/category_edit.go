package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"storefront/ent"
	"storefront/ent/category"
	"storefront/ent/goods"
	"storefront/internal/listing"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
)

// CategoryInput creates a category (Slug nil: made from the name).
type CategoryInput struct {
	Name     string
	Slug     *string
	ParentID *int64
}

// CategoryEdit renames or moves a category; nil fields stay, ToRoot makes
// it a root.
type CategoryEdit struct {
	ID       int64
	Name     *string
	Slug     *string
	ParentID *int64
	ToRoot   bool
}

// Every transaction that changes the tree reads it through lockedTree
// first, so its checks (no cycle, at most listing.MaxDepth levels, at most
// MaxChildren under a parent and MaxCategories in all, a made slug that is
// free) read the tree as it is when the change commits; category_lock.go
// says how.

// CreateCategory adds a category under its parent.
func (s *Service) CreateCategory(ctx context.Context, in CategoryInput) (*Category, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := checkName("category name", in.Name, 60); err != nil {
		return nil, err
	}
	if in.Slug != nil {
		if err := checkSlug("category", *in.Slug); err != nil {
			return nil, err
		}
	}
	var id int64
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		t, err := s.lockedTree(ctx, tx)
		if err != nil {
			return err
		}
		if len(t.byID) >= MaxCategories {
			return fmt.Errorf("%w: at most %d categories", errs.InvalidInput, MaxCategories)
		}
		depth, err := t.depthOf(in.ParentID)
		if err != nil {
			return err
		}
		if depth+1 > listing.MaxDepth {
			return tooDeep()
		}
		if err := t.canTakeChild(in.ParentID); err != nil {
			return err
		}
		c := tx.Category.Create().SetName(in.Name).SetNillableParentID(in.ParentID)
		slug := ""
		if in.Slug != nil {
			slug = *in.Slug
		} else if made := slugFrom("category", in.Name); made != "" && t.bySlug[made] == nil {
			slug = made
		}
		// category-<id> needs the id: a placeholder no slug can equal first
		// ("!" is no slug's character; NUL was, until PostgreSQL, whose text
		// cannot hold it).
		row, err := c.SetSlug(cmp.Or(slug, "!"+in.Name)).Save(ctx)
		if err != nil {
			return slugError(err)
		}
		id = row.ID
		if slug == "" {
			return tx.Category.UpdateOneID(id).SetSlug(fmt.Sprintf("category-%d", id)).Exec(ctx)
		}
		return nil
	})
	s.treeChanged()
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.Category(ctx, &id, nil)
}

// depthOf is how many levels parent's path has (0 for the roots), or
// NotFound, or ErrTreeLoop when the path never reaches a root.
func (t *tree) depthOf(parent *int64) (int, error) {
	if parent == nil {
		return 0, nil
	}
	k := t.byID[*parent]
	if k == nil {
		return 0, fmt.Errorf("%w: category %d", errs.NotFound, *parent)
	}
	path, err := t.pathOf(k)
	return len(path), err
}

// canTakeChild says whether parent (nil: the roots) has room for one more.
func (t *tree) canTakeChild(parent *int64) error {
	if len(t.children[valueOr(parent, 0)]) >= MaxChildren {
		return fmt.Errorf("%w: a category has at most %d children", errs.InvalidInput, MaxChildren)
	}
	return nil
}

func tooDeep() error {
	return fmt.Errorf("%w: categories are at most %d levels deep", errs.InvalidInput, listing.MaxDepth)
}

// UpdateCategory renames or moves a category. A move re-lists every goods
// in the moved subtree (their scopes change) in the same transaction.
func (s *Service) UpdateCategory(ctx context.Context, in CategoryEdit) (*Category, error) {
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		if err := checkName("category name", *in.Name, 60); err != nil {
			return nil, err
		}
	}
	if in.Slug != nil {
		if err := checkSlug("category", *in.Slug); err != nil {
			return nil, err
		}
	}
	if in.ToRoot && in.ParentID != nil {
		return nil, fmt.Errorf("%w: give parentId or toRoot, not both", errs.InvalidInput)
	}
	var moved []int64
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		moved = nil
		t, err := s.lockedTree(ctx, tx)
		if err != nil {
			return err
		}
		k := t.byID[in.ID]
		if k == nil {
			return fmt.Errorf("%w: category %d", errs.NotFound, in.ID)
		}
		u := tx.Category.UpdateOneID(in.ID)
		if in.Name != nil {
			u.SetName(*in.Name)
		}
		if in.Slug != nil {
			u.SetSlug(*in.Slug)
		}
		move := in.ToRoot || in.ParentID != nil
		var subtree []int64
		if move {
			if subtree, err = t.canMove(k, in.ParentID); err != nil {
				return err
			}
			if in.ToRoot {
				u.ClearParentID()
			} else {
				u.SetParentID(*in.ParentID)
			}
		}
		if err := u.Exec(ctx); err != nil {
			return slugError(err)
		}
		if !move {
			return nil
		}
		// A plain read: the snapshot is taken after the tree's lock, and a
		// goods edit that puts a goods into the subtree later reads the tree
		// with a shared lock (listing's parents), so it waits for this move
		// and lists the goods under the moved tree itself.
		if moved, err = tx.Goods.Query().Where(goods.CategoryIDIn(subtree...)).IDs(ctx); err != nil {
			return err
		}
		return listing.Refresh(ctx, tx, moved...)
	})
	s.treeChanged()
	if err != nil {
		return nil, store.Classify(err)
	}
	for _, id := range moved {
		s.changed(id)
	}
	return s.Category(ctx, &in.ID, nil)
}

// canMove checks a move of k under parent (nil: to the roots) against the
// tree as it will be after it, and returns k's subtree (k included). The
// walks are those of the tree after the move, so a move that takes a
// category out of a loop written by hand is allowed: that is its repair.
func (t *tree) canMove(k *Category, parent *int64) ([]int64, error) {
	if parent != nil {
		p := t.byID[*parent]
		if p == nil {
			return nil, fmt.Errorf("%w: category %d", errs.NotFound, *parent)
		}
		// The parent's path as it is now is its path after the move unless
		// it passes through k: then k would be its own ancestor.
		up, loop := t.up(p)
		if slices.Contains(up, k) {
			return nil, fmt.Errorf("%w: category %d cannot move under itself or its descendant %d", errs.InvalidInput, k.ID, p.ID)
		}
		if loop != nil {
			return nil, loopError(p, loop)
		}
	}
	subtree, height, err := t.below(k.ID)
	if err != nil {
		return nil, err
	}
	depth, err := t.depthOf(parent)
	if err != nil {
		return nil, err
	}
	if depth+height > listing.MaxDepth {
		return nil, tooDeep()
	}
	if !samePlace(k.ParentID, parent) {
		if err := t.canTakeChild(parent); err != nil {
			return nil, err
		}
	}
	return subtree, nil
}

func samePlace(a, b *int64) bool { return valueOr(a, 0) == valueOr(b, 0) }

func slugError(err error) error {
	if store.IsDuplicate(err) {
		return fmt.Errorf("%w: the slug is taken", errs.InvalidInput)
	}
	return err
}

// checkCategory confirms a goods' category exists (inside the edit).
func checkCategory(ctx context.Context, tx *ent.Tx, id *int64) error {
	if id == nil {
		return nil
	}
	ok, err := tx.Category.Query().Where(category.ID(*id)).Exist(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: category %d does not exist", errs.InvalidInput, *id)
	}
	return nil
}
