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
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
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
	return treeOf(rows), nil
}

// treeOf indexes the rows of the category table. It follows no parent:
// whatever the rows say (a loop too), it ends.
func treeOf(rows []*ent.Category) *tree {
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
	return t
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
	return t.pathOf(k)
}
