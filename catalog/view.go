package catalog

import (
	"fmt"

	"storefront/enums"
	"storefront/money"
	"storefront/skumatrix"
)

// Goods is the product view of one goods: catalog data plus a stock snapshot,
// immutable once built, so one value can serve every concurrent request for
// the page. The GraphQL type Goods binds to it directly: plain fields and
// argument methods resolve inline, without a resolver goroutine per field.
type Goods struct {
	ID       int64
	Name     string
	Code     string
	Status   enums.GoodsStatus
	SpecType enums.SpecType
	Version  int64
	Specs    []*Spec

	skus       []*SKU // every SKU in id order
	enabled    []*SKU
	byKey      map[string]*SKU
	ix         *skumatrix.Index
	ixSKUs     []*SKU // ix position -> SKU
	avail      skumatrix.Bitset
	priceRange *PriceRange
	totalStock int64
}

// Spec is a dimension with its active values, in display order.
type Spec struct {
	ID     int64
	Name   string
	Values []*SpecValue
}

// SpecValue is one value of a dimension.
type SpecValue struct {
	ID   int64
	Name string
}

// SKU is one sellable combination as a product page sees it.
type SKU struct {
	ID             int64
	GoodsID        int64
	SpecValueIDs   []int64
	SpecValueStr   string
	SpecKey        string
	SkuCode        *string
	SellPrice      money.Money
	LineationPrice money.Money
	Stock          int64
	Version        int64
	Volume         int64
	Status         enums.SkuStatus
	// Cost is admin-only; GraphQL's costPrice resolver checks the role first.
	Cost money.Money
}

// PriceRange is min and max sell price over enabled SKUs.
type PriceRange struct{ Min, Max money.Money }

// SelectableValue says whether a spec value can still be chosen.
type SelectableValue struct {
	SpecValueID int64
	Selectable  bool
}

// newGoods derives everything a product page asks for once, so answering a
// request is reading fields. skus must be in id order.
func newGoods(g Goods, skus []*SKU) (*Goods, error) {
	v := &g
	v.skus = skus
	v.byKey = make(map[string]*SKU, len(skus))
	dims := make([][]int64, len(v.Specs))
	active := map[int64]bool{}
	for i, s := range v.Specs {
		for _, val := range s.Values {
			dims[i] = append(dims[i], val.ID)
			active[val.ID] = true
		}
	}
	var ixIn []skumatrix.SKU
	for _, s := range skus {
		v.byKey[s.SpecKey] = s
		if s.Status != enums.SkuEnabled {
			continue
		}
		v.enabled = append(v.enabled, s)
		// A SKU that still names a removed value cannot be chosen on the page.
		ok := len(s.SpecValueIDs) == len(dims)
		for _, id := range s.SpecValueIDs {
			ok = ok && active[id]
		}
		if ok {
			ixIn = append(ixIn, skumatrix.SKU{ValueIDs: s.SpecValueIDs, Enabled: true})
			v.ixSKUs = append(v.ixSKUs, s)
		}
	}
	ix, err := skumatrix.NewIndex(dims, ixIn)
	if err != nil {
		return nil, fmt.Errorf("goods %d: building selectable index: %w", g.ID, err)
	}
	v.ix = ix
	v.avail = ix.Avail(func(pos int) int64 { return v.ixSKUs[pos].Stock })
	for i, s := range v.enabled {
		v.totalStock += s.Stock
		if i == 0 {
			v.priceRange = &PriceRange{Min: s.SellPrice, Max: s.SellPrice}
			continue
		}
		v.priceRange.Min = min(v.priceRange.Min, s.SellPrice)
		v.priceRange.Max = max(v.priceRange.Max, s.SellPrice)
	}
	return v, nil
}

// SkuList returns enabled SKUs, or all of them when includeDisabled (admins).
func (g *Goods) SkuList(includeDisabled bool) []*SKU {
	if includeDisabled {
		return g.skus
	}
	return g.enabled
}

// PriceRange counts enabled SKUs only: a disabled SKU's price on the page
// would advertise a price nobody can buy (seed 003, 4.5). Nil when none.
func (g *Goods) PriceRange() *PriceRange { return g.priceRange }

// TotalStock sums enabled SKUs only, consistent with what is selectable.
func (g *Goods) TotalStock() int64 { return g.totalStock }

// SkuBySelection normalises the ids into the spec key, so any click order
// finds the same SKU. A partial selection finds nothing; ids that are not one
// value per dimension of this goods are ErrInvalidSelection.
func (g *Goods) SkuBySelection(specValueIDs []int64) (*SKU, error) {
	if err := g.ix.ValidateSelection(specValueIDs); err != nil {
		return nil, err
	}
	s := g.byKey[skumatrix.SpecKey(specValueIDs)]
	if s == nil || s.Status != enums.SkuEnabled {
		return nil, nil
	}
	return s, nil
}

// Selectable answers, for every active value, whether some enabled SKU with
// stock contains it together with the selected values of the other dimensions.
func (g *Goods) Selectable(selected []int64) ([]*SelectableValue, error) {
	flags, err := g.ix.Selectable(g.avail, selected, nil)
	if err != nil {
		return nil, err
	}
	vals := g.ix.Values()
	out := make([]*SelectableValue, len(vals))
	backing := make([]SelectableValue, len(vals))
	for i, id := range vals {
		backing[i] = SelectableValue{SpecValueID: id, Selectable: flags[i]}
		out[i] = &backing[i]
	}
	return out, nil
}
