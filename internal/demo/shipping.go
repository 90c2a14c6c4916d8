package demo

import (
	"context"
	"fmt"

	"storefront/internal/catalog"
	"storefront/internal/shipping"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/media"
	"storefront/internal/vocab/money"
)

// The demo's shipping: a fifth goods sold by weight, a water
// bottle in two sizes, under a WEIGHT freight template, and an address for
// the demo customer. The four goods of Seed stay free to ship (no
// template), so clients, benchmarks and tests that order them without an
// address work as before; SeedShipping is a step of its own for the same
// reason, run by serve --demo and seed-demo after Seed.

// Customer is the demo customer's id (the sub of the token serve --demo
// prints).
const Customer = "demo-customer"

// BottleCode is the demo goods sold by weight.
const BottleCode = "DEMO-BOTTLE"

// BottleTemplate is the name of its freight template: 8.00 for the first
// 1,000 g and 2.00 per 500 g more, 5.00 + 1.00 per 500 g to Shanghai (31),
// free over 199.00.
const BottleTemplate = "按重量计费（水杯）"

// BottleSizes are the bottle's SKUs: size, price, grams per unit.
var BottleSizes = []struct {
	Size   string
	Price  string
	Weight int64
}{{"500ml", "59.00", 350}, {"750ml", "79.00", 480}}

// DemoAddress is the demo customer's address (Shanghai, Xuhui: 310104).
var DemoAddress = shipping.OrderAddress{Name: "张三", Phone: "13800138000", RegionCode: "310104",
	Province: "上海市", City: "上海市", District: "徐汇区", Line: "漕溪北路 88 号 1201 室", PostalCode: "200030"}

// SeedShipping creates what is missing of the template, the bottle (in a
// category 家居 › 水具 of its own) and, when customer's address book is
// empty, its address; it returns the bottle's goods id and the template's
// id. Running it again changes nothing.
func SeedShipping(ctx context.Context, cat *catalog.Service, ship *shipping.Service, customer string) (goods, template int64, err error) {
	ts, err := ship.Templates(ctx)
	if err != nil {
		return 0, 0, err
	}
	for _, t := range ts {
		if t.Name == BottleTemplate {
			template = t.ID
		}
	}
	if template == 0 {
		free := money.MustParse("199.00")
		t, err := ship.CreateTemplate(ctx, shipping.TemplateInput{Name: BottleTemplate, ChargeBy: enums.ChargeByWeight, FreeOver: &free,
			Rules: []shipping.Rule{
				{RegionCodes: []string{"*"}, FirstUnits: 1000, FirstFee: money.MustParse("8.00"), NextUnits: 500, NextFee: money.MustParse("2.00")},
				{RegionCodes: []string{"31"}, FirstUnits: 1000, FirstFee: money.MustParse("5.00"), NextUnits: 500, NextFee: money.MustParse("1.00")},
			}})
		if err != nil {
			return 0, 0, fmt.Errorf("creating the demo freight template: %w", err)
		}
		template = t.ID
	}
	if goods, err = cat.IDByCode(ctx, BottleCode); err != nil {
		return 0, 0, err
	}
	if goods == 0 {
		in, err := bottle(ctx, cat, template)
		if err != nil {
			return 0, 0, err
		}
		g, err := cat.Create(ctx, in)
		if err != nil {
			return 0, 0, fmt.Errorf("creating demo goods %s: %w", BottleCode, err)
		}
		goods = g.ID
	}
	book, err := ship.Addresses(ctx, customer)
	if err != nil {
		return 0, 0, err
	}
	if len(book) == 0 {
		if _, err := ship.AddAddress(ctx, customer, shipping.AddressInput{OrderAddress: DemoAddress, IsDefault: true}); err != nil {
			return 0, 0, fmt.Errorf("adding the demo customer's address: %w", err)
		}
	}
	return goods, template, nil
}

func bottle(ctx context.Context, cat *catalog.Service, template int64) (catalog.CreateInput, error) {
	var parent *int64
	for _, c := range []struct{ slug, name string }{{"home", "家居"}, {"drinkware", "水具"}} {
		slug := c.slug
		k, err := cat.Category(ctx, nil, &slug)
		if err != nil {
			return catalog.CreateInput{}, err
		}
		if k == nil {
			if k, err = cat.CreateCategory(ctx, catalog.CategoryInput{Name: c.name, Slug: &slug, ParentID: parent}); err != nil {
				return catalog.CreateInput{}, fmt.Errorf("creating demo category %s: %w", slug, err)
			}
		}
		parent = &k.ID
	}
	desc := "双层不锈钢保温水杯，两种容量，按重量计运费。\n\nA steel bottle in two sizes, shipped under a WEIGHT freight template."
	images := []media.Image{{URL: "/shop/static/demo-bottle.svg", Alt: "保温水杯"}}
	in := catalog.CreateInput{
		Name: "不锈钢保温水杯", Code: BottleCode, Status: enums.GoodsOnShelf, ShippingTemplateID: &template, CategoryID: parent,
		Specs:   []catalog.SpecInput{{Name: "容量", Values: []string{BottleSizes[0].Size, BottleSizes[1].Size}}},
		Content: catalog.Content{Description: &desc, Images: &images},
	}
	for _, s := range BottleSizes {
		p := money.MustParse(s.Price)
		in.Skus = append(in.Skus, catalog.SkuOverride{Values: []string{s.Size}, SkuTerms: catalog.SkuTerms{
			SellPrice: p, LineationPrice: p + money.MustParse("20.00"), CostPrice: p / 2, Stock: 100, WeightGrams: s.Weight}})
	}
	return in, nil
}
