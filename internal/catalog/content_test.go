package catalog_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"storefront/internal/catalog"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/must"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/media"
	"storefront/internal/vocab/money"
)

func contentGoods(name, code string, c catalog.Content) catalog.CreateInput {
	return catalog.CreateInput{Name: name, Code: code, Status: enums.GoodsOnShelf, Content: c,
		DefaultSku: catalog.SkuTerms{SellPrice: money.MustParse("10.00"), Stock: 1}}
}

// Slugs: made from the code, goods-<id> for a Chinese name without a code
// or a code whose slug is taken, unique, lowercase [a-z0-9-]; content rules
// refuse bad input with INVALID_INPUT and nothing written; goods(slug) finds
// the goods.
func TestGoodsContent(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		a, err := s.Create(ctx, contentGoods("Cotton Tee", "TEE 01/Black", catalog.Content{}))
		must.NoErr(t, err)
		if a.Slug != "tee-01-black" {
			t.Errorf("slug from code %q: %q, want tee-01-black", "TEE 01/Black", a.Slug)
		}
		b, err := s.Create(ctx, contentGoods("纯棉圆领T恤", "", catalog.Content{}))
		must.NoErr(t, err)
		if want := "goods-" + itoa(b.ID); b.Slug != want {
			t.Errorf("Chinese name, no code: slug %q, want %q", b.Slug, want)
		}
		c, err := s.Create(ctx, contentGoods("Another", "tee-01-black", catalog.Content{}))
		must.NoErr(t, err)
		if want := "goods-" + itoa(c.ID); c.Slug != want {
			t.Errorf("code whose slug is taken: %q, want %q", c.Slug, want)
		}
		desc := "第一段\n\nsecond paragraph"
		imgs := []media.Image{{URL: "https://cdn.example.com/a.jpg", Alt: "正面"}, {URL: "/shop/static/demo-bag.svg"}}
		slug := "my-bag"
		d, err := s.Create(ctx, contentGoods("Bag", "BAG", catalog.Content{Description: &desc, Images: &imgs, Slug: &slug}))
		must.NoErr(t, err)
		if d.Slug != slug || d.Description != desc || len(d.Images) != 2 || d.Images[0] != imgs[0] {
			t.Errorf("created with content: %q %q %+v", d.Slug, d.Description, d.Images)
		}
		found, err := s.GoodsBySlug(ctx, catalog.Viewer{}, "my-bag")
		if err != nil || found == nil || found.ID != d.ID {
			t.Errorf("goods(slug: my-bag) = %v, %v; want goods %d", found, err, d.ID)
		}
		if none, err := s.GoodsBySlug(ctx, catalog.Viewer{}, "nope"); err != nil || none != nil {
			t.Errorf("goods(slug: nope) = %v, %v; want nil", none, err)
		}

		long := strings.Repeat("字", catalog.MaxDescription+1)
		many := make([]media.Image, catalog.MaxImages+1)
		for i := range many {
			many[i] = media.Image{URL: "/x.png"}
		}
		bad := func(urls ...string) *[]media.Image {
			out := make([]media.Image, len(urls))
			for i, u := range urls {
				out[i] = media.Image{URL: u}
			}
			return &out
		}
		str := func(s string) *string { return &s }
		for name, c := range map[string]catalog.Content{
			"description too long": {Description: &long},
			"21 images":            {Images: &many},
			"http image":           {Images: bad("http://example.com/a.jpg")},
			"javascript image":     {Images: bad("javascript:alert(1)")},
			"protocol-relative":    {Images: bad("//evil.example/a.jpg")},
			"relative path":        {Images: bad("a.jpg")},
			"duplicate slug":       {Slug: str("my-bag")},
			"uppercase slug":       {Slug: str("My-Bag")},
			"slug with space":      {Slug: str("my bag")},
			"reserved slug":        {Slug: str("goods-99")},
			"empty slug":           {Slug: str("")},
		} {
			before, _ := db.Client.Goods.Query().Count(ctx)
			_, err := s.Create(ctx, contentGoods("Bad", "", c))
			if !errors.Is(err, errs.InvalidInput) {
				t.Errorf("%s: %v, want INVALID_INPUT", name, err)
			}
			if after, _ := db.Client.Goods.Query().Count(ctx); after != before {
				t.Errorf("%s: %d goods written", name, after-before)
			}
		}

		// updateGoods: a slug taken by another goods is refused, the version is checked.
		_, err = s.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: a.ID, ExpectedVersion: a.Version, Content: catalog.Content{Slug: str("my-bag")}})
		if !errors.Is(err, errs.InvalidInput) {
			t.Errorf("updateGoods to a taken slug: %v, want INVALID_INPUT", err)
		}
		u, err := s.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: a.ID, ExpectedVersion: a.Version, Name: str("Cotton Tee II"),
			Content: catalog.Content{Description: str("new")}})
		must.NoErr(t, err)
		if u.Name != "Cotton Tee II" || u.Description != "new" || u.Slug != "tee-01-black" || u.Version != a.Version+1 {
			t.Errorf("updateGoods: %q %q %q v%d", u.Name, u.Description, u.Slug, u.Version)
		}
		if _, err := s.UpdateGoods(ctx, catalog.UpdateGoodsInput{GoodsID: a.ID, ExpectedVersion: a.Version, Name: str("x")}); !errors.Is(err, errs.VersionConflict) {
			t.Errorf("updateGoods at an old version: %v, want VERSION_CONFLICT", err)
		}
	})
}

// The category tree: at most 5 levels, no cycles, a move re-parents the
// subtree; categories and path read it back.
func TestCategories(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := catalog.New(db, catalog.DefaultConfig())
		t.Cleanup(s.Close)
		var chain []*catalog.Category
		var parent *int64
		for _, name := range []string{"一级", "Two", "Three", "Four", "Five"} {
			c, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: name, ParentID: parent})
			must.NoErr(t, err)
			chain = append(chain, c)
			parent = &c.ID
		}
		if want := "category-" + itoa(chain[0].ID); chain[0].Slug != want || chain[1].Slug != "two" {
			t.Errorf("slugs %q %q, want %q and two", chain[0].Slug, chain[1].Slug, want)
		}
		if _, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: "Six", ParentID: parent}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("a sixth level: %v, want INVALID_INPUT", err)
		}
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: chain[1].ID, ParentID: &chain[3].ID}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("a move under its own descendant: %v, want INVALID_INPUT", err)
		}
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: chain[1].ID, ParentID: &chain[1].ID}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("a move under itself: %v, want INVALID_INPUT", err)
		}
		other, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: "Other"})
		must.NoErr(t, err)
		otherChild, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: "Other child", ParentID: &other.ID})
		must.NoErr(t, err)
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: chain[1].ID, ParentID: &otherChild.ID}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("Two (4 levels with its subtree) under a second-level category, 6 deep: %v, want INVALID_INPUT", err)
		}
		if _, err := s.UpdateCategory(ctx, catalog.CategoryEdit{ID: chain[3].ID, ParentID: &other.ID}); err != nil {
			t.Fatalf("moving Four (with Five) under Other: %v", err)
		}
		path, err := s.Path(ctx, chain[4])
		must.NoErr(t, err)
		if len(path) != 3 || path[0].ID != other.ID || path[1].ID != chain[3].ID || path[2].ID != chain[4].ID {
			t.Errorf("path of Five after the move: %+v, want Other › Four › Five", path)
		}
		roots, err := s.Categories(ctx)
		must.NoErr(t, err)
		if len(roots) != 2 || roots[0].Name != "Other" || roots[1].Name != "一级" {
			t.Errorf("roots %+v, want Other and 一级 in name order", roots)
		}
		if _, err := s.CreateCategory(ctx, catalog.CategoryInput{Name: "Dup", Slug: &other.Slug}); !errors.Is(err, errs.InvalidInput) {
			t.Errorf("a duplicate category slug: %v, want INVALID_INPUT", err)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
