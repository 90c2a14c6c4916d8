// Package demo creates the demo catalog: the seed's T-shirt (3 colours × 4
// sizes), a single-spec goods, a 500-SKU goods for load tests, and a
// high-value scarf sold lock-at-order.
package demo

import (
	"context"
	"fmt"

	"storefront/internal/catalog"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/money"
)

// Codes of the demo goods; Seed uses them to stay idempotent.
const (
	TShirtCode = "DEMO-TSHIRT"
	BagCode    = "DEMO-BAG"
	ShoeCode   = "DEMO-SHOE-500"
	ScarfCode  = "DEMO-SCARF"
)

// ScarfColours are the lock-at-order scarf's values, each with ScarfStock.
var ScarfColours = []string{"酒红", "墨绿", "象牙白"}

// ScarfStock is each scarf SKU's opening stock.
const ScarfStock = 20

// TShirtStock is the demo T-shirt's stock by colour and size. 黑色/L is the
// seed's hot SKU with 200; the zeros make the product page grey sizes out.
var TShirtStock = map[[2]string]int64{
	{"黑色", "S"}: 0, {"黑色", "M"}: 50, {"黑色", "L"}: 200, {"黑色", "XL"}: 0,
	{"白色", "S"}: 30, {"白色", "M"}: 40, {"白色", "L"}: 0, {"白色", "XL"}: 10,
	{"藏青", "S"}: 20, {"藏青", "M"}: 0, {"藏青", "L"}: 15, {"藏青", "XL"}: 5,
}

// Sizes price from 89.00 to 129.00.
var sizePrice = map[string]string{"S": "89.00", "M": "99.00", "L": "109.00", "XL": "129.00"}

// Seed creates every demo goods that is missing (found by code) and returns
// the ids of all of them. Running it again changes nothing. The scarf comes
// last, so the first three keep the ids, values and SKU ids tests know.
func Seed(ctx context.Context, cat *catalog.Service) (map[string]int64, error) {
	ids := map[string]int64{}
	for _, in := range []catalog.CreateInput{tshirt(), bag(), shoe(), scarf()} {
		id, err := cat.IDByCode(ctx, in.Code)
		if err != nil {
			return nil, err
		}
		if id == 0 {
			if in, err = withContent(ctx, cat, in); err != nil {
				return nil, err
			}
			g, err := cat.Create(ctx, in)
			if err != nil {
				return nil, fmt.Errorf("creating demo goods %s: %w", in.Code, err)
			}
			if g == nil { // not readable right after Create: a bug, not a state
				return nil, fmt.Errorf("creating demo goods %s: it vanished right after it was created", in.Code)
			}
			id = g.ID
		}
		ids[in.Code] = id
	}
	return ids, nil
}

func tshirt() catalog.CreateInput {
	colours := []string{"黑色", "白色", "藏青"}
	sizes := []string{"S", "M", "L", "XL"}
	in := catalog.CreateInput{
		Name: "纯棉圆领T恤", Code: TShirtCode, Status: enums.GoodsOnShelf,
		Specs: []catalog.SpecInput{{Name: "颜色", Values: colours}, {Name: "尺码", Values: sizes}},
	}
	for _, c := range colours {
		for _, s := range sizes {
			p := money.MustParse(sizePrice[s])
			in.Skus = append(in.Skus, catalog.SkuOverride{
				Values: []string{c, s},
				SkuTerms: catalog.SkuTerms{
					SellPrice: p, LineationPrice: p + money.MustParse("40.00"), CostPrice: p / 2,
					Stock: TShirtStock[[2]string{c, s}],
				},
			})
		}
	}
	return in
}

func bag() catalog.CreateInput {
	return catalog.CreateInput{
		Name: "帆布托特包", Code: BagCode, Status: enums.GoodsOnShelf,
		DefaultSku: catalog.SkuTerms{
			SellPrice: money.MustParse("39.00"), LineationPrice: money.MustParse("59.00"),
			CostPrice: money.MustParse("15.00"), Stock: 100,
		},
	}
}

// shoe has 5 × 5 × 5 × 4 = 500 SKUs: the seed's upper limit, for load tests.
func shoe() catalog.CreateInput {
	dim := func(prefix string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%s%d", prefix, i+1)
		}
		return out
	}
	in := catalog.CreateInput{
		Name: "跑步鞋（500 SKU）", Code: ShoeCode, Status: enums.GoodsOnShelf,
		Specs: []catalog.SpecInput{
			{Name: "颜色", Values: dim("色", 5)},
			{Name: "尺码", Values: []string{"38", "39", "40", "41", "42"}},
			{Name: "楦型", Values: dim("楦", 5)},
			{Name: "鞋带", Values: dim("带", 4)},
		},
		DefaultSku: catalog.SkuTerms{
			SellPrice: money.MustParse("299.00"), LineationPrice: money.MustParse("399.00"),
			CostPrice: money.MustParse("120.00"), Stock: 1000,
		},
	}
	return in
}

// scarf is high-value goods sold lock-at-order (seed 003, 5.2): an order
// holds its units until payment instead of deducting them, so unpaid orders
// of an expensive item never book ledger rows that a close must undo.
func scarf() catalog.CreateInput {
	return catalog.CreateInput{
		Name: "真丝围巾", Code: ScarfCode, Status: enums.GoodsOnShelf, StockMode: enums.LockAtOrder,
		Specs: []catalog.SpecInput{{Name: "颜色", Values: ScarfColours}},
		DefaultSku: catalog.SkuTerms{
			SellPrice: money.MustParse("899.00"), LineationPrice: money.MustParse("1299.00"),
			CostPrice: money.MustParse("420.00"), Stock: ScarfStock,
		},
	}
}
