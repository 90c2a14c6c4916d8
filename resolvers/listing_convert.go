package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"storefront/graph"
	"storefront/internal/catalog"
	"storefront/internal/listing"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/media"
	"storefront/internal/vocab/paging"
)

func listParams(ctx context.Context, first *int64, after *string, f *graph.GoodsFilter, sort *graph.GoodsSort, status *enums.GoodsStatus) (catalog.ListParams, error) {
	var id ids
	p := catalog.ListParams{First: paging.First(first), After: deref(after), Status: status, Count: selected(ctx, "totalCount")}
	if f != nil {
		p.CategoryID, p.Search, p.PriceMin, p.PriceMax, p.InStock = id.opt(f.CategoryID), deref(f.Search), f.PriceMin, f.PriceMax, f.InStock
		if f.Status != nil {
			p.Status = f.Status
		}
	}
	if sort != nil {
		p.Sort, p.Desc = listing.Field(sort.Field), sort.Direction == graph.SortDirectionDesc
	}
	return p, id.err
}

// selected says whether the field being resolved asks for child name (in
// any fragment): totalCount costs a query, made only when wanted.
func selected(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

func images(in []*graph.ImageInput) *[]media.Image {
	if in == nil {
		return nil
	}
	out := make([]media.Image, len(in))
	for i, im := range in {
		out[i] = media.Image{URL: im.URL, Alt: deref(im.Alt)}
	}
	return &out
}

func content(description *string, imgs []*graph.ImageInput, slug *string) catalog.Content {
	return catalog.Content{Description: description, Images: images(imgs), Slug: slug}
}

func updateGoodsInput(in graph.UpdateGoodsInput) (catalog.UpdateGoodsInput, error) {
	var p ids
	return catalog.UpdateGoodsInput{GoodsID: p.one(in.GoodsID), ExpectedVersion: in.ExpectedVersion, Name: in.Name,
		Content: content(in.Description, in.Images, in.Slug), CategoryID: p.opt(in.CategoryID), ClearCategory: deref(in.ClearCategory),
		PurchaseLimit: in.PurchaseLimit, ClearPurchaseLimit: deref(in.ClearPurchaseLimit),
		ShippingTemplateID: p.opt(in.ShippingTemplateID), ClearShippingTemplate: deref(in.ClearShippingTemplate)}, p.err
}
