package catalog

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"storefront/ent"
	"storefront/ent/category"
	"storefront/ent/goods"
	"storefront/errs"
	"storefront/listing"
	"storefront/store"
)

// Category is a node of the category tree as clients see it.
type Category struct {
	ID       int64
	Name     string
	Slug     string
	ParentID *int64
}

// The tree is small and bounded (MaxChildren per parent, MaxCategories in
// all, listing.MaxDepth levels), so it is read whole and kept: one query per
// StockTTL, or at once after an edit through this instance.
const (
	MaxChildren   = 100
	MaxCategories = 1000
)

type tree struct {
	byID     map[int64]*Category
	bySlug   map[string]*Category
	children map[int64][]*Category // 0: the roots; each in name, then id, order
	loaded   time.Time
}

type treeCache struct {
	mu  sync.Mutex
	cur *tree
}

func (s *Service) tree(ctx context.Context) (*tree, error) {
	s.cats.mu.Lock()
	defer s.cats.mu.Unlock()
	if t := s.cats.cur; t != nil && time.Since(t.loaded) < s.cfg.StockTTL {
		return t, nil
	}
	t, err := loadTree(ctx, s.db.Client)
	if err != nil {
		return nil, err
	}
	s.cats.cur = t
	return t, nil
}

func (s *Service) treeChanged() {
	s.cats.mu.Lock()
	s.cats.cur = nil
	s.cats.mu.Unlock()
}

func loadTree(ctx context.Context, c *ent.Client) (*tree, error) {
	rows, err := c.Category.Query().All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading categories: %w", err))
	}
	t := &tree{byID: map[int64]*Category{}, bySlug: map[string]*Category{}, children: map[int64][]*Category{}, loaded: time.Now()}
	for _, r := range rows {
		k := &Category{ID: r.ID, Name: r.Name, Slug: r.Slug, ParentID: r.ParentID}
		t.byID[k.ID], t.bySlug[k.Slug] = k, k
		p := int64(0)
		if k.ParentID != nil {
			p = *k.ParentID
		}
		t.children[p] = append(t.children[p], k)
	}
	for _, list := range t.children {
		slices.SortFunc(list, func(a, b *Category) int { return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID)) })
	}
	return t, nil
}

// path is the category's ancestors from the root down to it.
func (t *tree) path(k *Category) []*Category {
	var out []*Category
	for n := k; n != nil && len(out) <= listing.MaxDepth; {
		out = append(out, n)
		if n.ParentID == nil {
			break
		}
		n = t.byID[*n.ParentID]
	}
	slices.Reverse(out)
	return out
}

// height is how many levels the subtree under k has, k's own included.
func (t *tree) height(id int64) int {
	h := 0
	for _, c := range t.children[id] {
		h = max(h, t.height(c.ID))
	}
	return h + 1
}

// subtree is id and every category below it.
func (t *tree) subtree(id int64) []int64 {
	out := []int64{id}
	for _, c := range t.children[id] {
		out = append(out, t.subtree(c.ID)...)
	}
	return out
}

// Categories returns the roots.
func (s *Service) Categories(ctx context.Context) ([]*Category, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	return t.children[0], nil
}

// Category finds a category by id or by slug (nil when unknown).
func (s *Service) Category(ctx context.Context, id *int64, slug *string) (*Category, error) {
	if (id == nil) == (slug == nil) {
		return nil, fmt.Errorf("%w: give exactly one of id and slug", errs.InvalidInput)
	}
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	if id != nil {
		return t.byID[*id], nil
	}
	return t.bySlug[*slug], nil
}

// Children, Parent and Path answer from the same tree.
func (s *Service) Children(ctx context.Context, k *Category) ([]*Category, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	return t.children[k.ID], nil
}

func (s *Service) Parent(ctx context.Context, k *Category) (*Category, error) {
	if k.ParentID == nil {
		return nil, nil
	}
	return s.Category(ctx, k.ParentID, nil)
}

func (s *Service) Path(ctx context.Context, k *Category) ([]*Category, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	if cur := t.byID[k.ID]; cur != nil {
		k = cur
	}
	return t.path(k), nil
}

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
	err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		t, err := loadTree(ctx, tx.Client())
		if err != nil {
			return err
		}
		if len(t.byID) >= MaxCategories {
			return fmt.Errorf("%w: at most %d categories", errs.InvalidInput, MaxCategories)
		}
		if err := t.canHold(in.ParentID, 1); err != nil {
			return err
		}
		c := tx.Category.Create().SetName(in.Name).SetNillableParentID(in.ParentID)
		slug := ""
		if in.Slug != nil {
			slug = *in.Slug
		} else if made := slugFrom("category", in.Name); made != "" && t.bySlug[made] == nil {
			slug = made
		}
		// category-<id> needs the id: a placeholder no slug can equal first.
		row, err := c.SetSlug(cmp.Or(slug, "\x00"+in.Name)).Save(ctx)
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

// canHold says whether parent (nil: the roots) can take a subtree of
// height more levels and one more child.
func (t *tree) canHold(parent *int64, height int) error {
	depth, p := 0, int64(0)
	if parent != nil {
		k := t.byID[*parent]
		if k == nil {
			return fmt.Errorf("%w: category %d", errs.NotFound, *parent)
		}
		depth, p = len(t.path(k)), k.ID
	}
	if depth+height > listing.MaxDepth {
		return fmt.Errorf("%w: categories are at most %d levels deep", errs.InvalidInput, listing.MaxDepth)
	}
	if len(t.children[p]) >= MaxChildren {
		return fmt.Errorf("%w: a category has at most %d children", errs.InvalidInput, MaxChildren)
	}
	return nil
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
	err := store.WithTx(ctx, s.db.Client, func(ctx context.Context, tx *ent.Tx) error {
		moved = nil
		t, err := loadTree(ctx, tx.Client())
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
		if move {
			if in.ParentID != nil && slices.Contains(t.subtree(in.ID), *in.ParentID) {
				return fmt.Errorf("%w: category %d cannot move under itself or its descendant %d", errs.InvalidInput, in.ID, *in.ParentID)
			}
			if err := t.canHold(in.ParentID, t.height(in.ID)); err != nil {
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
		if moved, err = tx.Goods.Query().Where(goods.CategoryIDIn(t.subtree(in.ID)...)).IDs(ctx); err != nil {
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
