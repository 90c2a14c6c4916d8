package demo

import (
	"context"
	"fmt"

	"storefront/internal/catalog"
	"storefront/internal/vocab/media"
)

// The demo's categories (slug → name, parent slug) and each demo goods'
// category, description and pictures (served by the binary under
// /shop/static/), for the listing page's menu and the product page.
var demoCategories = []struct{ slug, name, parent string }{
	{"clothing", "服装", ""}, {"tops", "上衣", "clothing"},
	{"accessories", "配饰", ""}, {"bags", "包袋", "accessories"}, {"scarves", "围巾", "accessories"},
	{"shoes", "鞋靴", ""},
}

var demoContent = map[string]struct {
	category, description string
	images                []media.Image
}{
	TShirtCode: {"tops", "精梳纯棉，圆领短袖，三色四码。\n\nCombed cotton, crew neck: 3 colours × 4 sizes, the seed's SKU matrix.",
		[]media.Image{{URL: "/shop/static/demo-tshirt.svg", Alt: "黑色 T恤"}, {URL: "/shop/static/demo-tshirt-white.svg", Alt: "白色 T恤"}}},
	BagCode:   {"bags", "加厚帆布托特包，单一规格。\n\nA heavy canvas tote with one SKU.", []media.Image{{URL: "/shop/static/demo-bag.svg", Alt: "帆布托特包"}}},
	ShoeCode:  {"shoes", "500 个 SKU 的跑步鞋，用于压测。\n\n5 colours × 5 sizes × 5 lasts × 4 laces.", []media.Image{{URL: "/shop/static/demo-shoe.svg", Alt: "跑步鞋"}}},
	ScarfCode: {"scarves", "桑蚕丝围巾：下单锁定库存，付款后扣减。\n\nMulberry silk, sold lock-at-order.", []media.Image{{URL: "/shop/static/demo-scarf.svg", Alt: "真丝围巾"}}},
}

// withContent gives a demo goods about to be created its category (made
// first when missing), description and pictures.
func withContent(ctx context.Context, cat *catalog.Service, in catalog.CreateInput) (catalog.CreateInput, error) {
	c, ok := demoContent[in.Code]
	if !ok {
		return in, nil
	}
	bySlug := map[string]int64{}
	for _, d := range demoCategories {
		slug := d.slug
		k, err := cat.Category(ctx, nil, &slug)
		if err != nil {
			return in, err
		}
		if k == nil {
			add := catalog.CategoryInput{Name: d.name, Slug: &slug}
			if d.parent != "" {
				p := bySlug[d.parent]
				add.ParentID = &p
			}
			if k, err = cat.CreateCategory(ctx, add); err != nil {
				return in, fmt.Errorf("creating demo category %s: %w", d.slug, err)
			}
		}
		bySlug[d.slug] = k.ID
	}
	catID, desc, images := bySlug[c.category], c.description, c.images
	in.CategoryID, in.Description, in.Images = &catID, &desc, &images
	return in, nil
}
