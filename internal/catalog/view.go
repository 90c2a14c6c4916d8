package catalog

import (
	"fmt"
	"sync"
	"time"

	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/media"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// Goods is the product view of one goods: catalog data plus a stock snapshot,
// immutable once built, so one value can serve every concurrent request for
// the page. The GraphQL type Goods binds to it directly: plain fields and
// argument methods resolve inline, without a resolver goroutine per field.
type Goods struct {
	ID        int64
	Name      string
	Code      string
	Status    enums.GoodsStatus
	SpecType  enums.SpecType
	StockMode enums.StockMode
	Version   int64
	Specs     []*Spec
	// Product-page content; a catalog edit (a version bump) changes it.
	Description string
	Images      []media.Image
	Slug        string
	CategoryID  *int64
	CreatedAt   time.Time
	// PurchaseLimit is the units one customer may hold in orders that
	// stand (nil: none).
	PurchaseLimit *int64
	// ShippingTemplateID is the freight template its orders are charged
	// by (internal/shipping); nil: it ships free.
	ShippingTemplateID *int64

	cat        *catalogPart // shared by every stock snapshot of this version
	skus       []*SKU       // every SKU in id order, carrying this snapshot's stock
	enabled    []*SKU
	avail      skumatrix.Bitset
	totalStock int64
}

// catalogPart is what only a catalog edit (a version bump) changes. Stock
// refreshes every few seconds; rebuilding the index, the spec-key map and the
// price range each time would waste the work the cache exists to save.
type catalogPart struct {
	tmpl       []SKU          // SKUs in id order; their Stock is the loaded one
	enabledIdx []int          // indexes into tmpl of enabled SKUs
	byKey      map[string]int // spec key -> index into tmpl
	ix         *skumatrix.Index
	ixPos      []int   // ix position -> index into tmpl
	values     []int64 // ix.Values(), once
	// Selectable's answers point into these instead of allocating one
	// SelectableValue per value per request: the view is immutable.
	yes, no    []SelectableValue
	priceRange *PriceRange
	cost       int64 // approximate bytes, for the cache's memory bound
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
	Stock          int64 // on hand: the ledger sums to it
	LockedStock    int64 // held by unpaid lock-at-order orders
	Version        int64 // the terms' version: catalog edits of this SKU
	StockVersion   int64 // the stock's version: every stock movement
	Volume         int64
	Status         enums.SkuStatus
	WeightGrams    int64 // one unit's shipping weight
	// Cost is admin-only; GraphQL's costPrice resolver checks the role first.
	Cost money.Money
}

// AvailableStock is what can be ordered: stock - lockedStock.
func (s *SKU) AvailableStock() int64 { return s.Stock - s.LockedStock }

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
	cat, err := newCatalogPart(&g, skus)
	if err != nil {
		return nil, err
	}
	g.cat = cat
	n := len(skus)
	l := skuLive{stock: make([]int64, n), locked: make([]int64, n), stockVersion: make([]int64, n), volume: make([]int64, n)}
	for i, s := range skus {
		l.stock[i], l.locked[i], l.stockVersion[i], l.volume[i] = s.Stock, s.LockedStock, s.StockVersion, s.Volume
	}
	return g.withStock(l), nil
}

// skuLive holds, per SKU in id order, the columns that move without a catalog
// edit and so belong to the stock snapshot, not the catalog part: stock and
// the stock version (every stock UPDATE bumps it) move with orders, volume
// with payments (a plain UPDATE that bumps no version, so it is compared
// itself). The SKU's own version is the terms' and stays in the catalog part.
type skuLive struct {
	stock, locked, stockVersion, volume []int64
}

func newCatalogPart(g *Goods, skus []*SKU) (*catalogPart, error) {
	c := &catalogPart{tmpl: make([]SKU, len(skus)), byKey: make(map[string]int, len(skus))}
	dims := make([][]int64, len(g.Specs))
	active := map[int64]bool{}
	c.cost = 512 + int64(len(g.Name)+len(g.Code)+len(g.Description)+len(g.Slug))
	for _, im := range g.Images {
		c.cost += 48 + int64(len(im.URL)+len(im.Alt))
	}
	for i, s := range g.Specs {
		c.cost += 64 + int64(len(s.Name))
		for _, val := range s.Values {
			dims[i] = append(dims[i], val.ID)
			active[val.ID] = true
			c.cost += 64 + int64(len(val.Name))
		}
	}
	var ixIn []skumatrix.SKU
	for i, s := range skus {
		c.tmpl[i] = *s
		c.byKey[s.SpecKey] = i
		// Two copies of the SKU (template and snapshot), its strings, the
		// map entry and the ids.
		c.cost += 2*200 + 2*int64(len(s.SpecValueStr)+len(s.SpecKey)) + 16*int64(len(s.SpecValueIDs)) + 64
		if s.Status != enums.SkuEnabled {
			continue
		}
		c.enabledIdx = append(c.enabledIdx, i)
		p := c.priceRange
		if p == nil {
			c.priceRange = &PriceRange{Min: s.SellPrice, Max: s.SellPrice}
		} else {
			p.Min, p.Max = min(p.Min, s.SellPrice), max(p.Max, s.SellPrice)
		}
		// A SKU that still names a removed value cannot be chosen on the page.
		ok := len(s.SpecValueIDs) == len(dims)
		for _, id := range s.SpecValueIDs {
			ok = ok && active[id]
		}
		if ok {
			ixIn = append(ixIn, skumatrix.SKU{ValueIDs: s.SpecValueIDs, Enabled: true})
			c.ixPos = append(c.ixPos, i)
		}
	}
	ix, err := skumatrix.NewIndex(dims, ixIn)
	if err != nil {
		return nil, fmt.Errorf("goods %d: building selectable index: %w", g.ID, err)
	}
	c.ix = ix
	c.values = ix.Values()
	c.yes = make([]SelectableValue, len(c.values))
	c.no = make([]SelectableValue, len(c.values))
	for i, id := range c.values {
		c.yes[i] = SelectableValue{SpecValueID: id, Selectable: true}
		c.no[i] = SelectableValue{SpecValueID: id}
	}
	c.cost += int64(len(c.values))*(8+2*24) + int64(len(c.values)*(len(ixIn)+63)/64*8)
	return c, nil
}

// withStock returns a new view of the same catalog part with l's stock,
// lock, version and volume for each SKU. g itself is left untouched: requests
// may be reading it. Total stock and what is selectable count available
// stock (stock - lock_stock): units locked by unpaid lock-mode orders cannot
// be ordered.
func (g *Goods) withStock(l skuLive) *Goods {
	v := *g
	c := g.cat
	backing := make([]SKU, len(c.tmpl))
	v.skus = make([]*SKU, len(c.tmpl))
	for i := range c.tmpl {
		backing[i] = c.tmpl[i]
		backing[i].Stock, backing[i].LockedStock, backing[i].StockVersion, backing[i].Volume = l.stock[i], l.locked[i], l.stockVersion[i], l.volume[i]
		v.skus[i] = &backing[i]
	}
	v.enabled = make([]*SKU, len(c.enabledIdx))
	v.totalStock = 0
	for j, i := range c.enabledIdx {
		v.enabled[j] = v.skus[i]
		v.totalStock += backing[i].AvailableStock()
	}
	v.avail = c.ix.Avail(func(pos int) int64 { return backing[c.ixPos[pos]].AvailableStock() })
	return &v
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
func (g *Goods) PriceRange() *PriceRange { return g.cat.priceRange }

// TotalStock sums enabled SKUs only, consistent with what is selectable.
func (g *Goods) TotalStock() int64 { return g.totalStock }

// SkuBySelection normalises the ids into the spec key, so any click order
// finds the same SKU. A partial selection finds nothing; ids that are not one
// value per dimension of this goods are ErrInvalidSelection.
func (g *Goods) SkuBySelection(specValueIDs []int64) (*SKU, error) {
	if err := g.cat.ix.ValidateSelection(specValueIDs); err != nil {
		return nil, err
	}
	i, ok := g.cat.byKey[skumatrix.SpecKey(specValueIDs)]
	if !ok || g.skus[i].Status != enums.SkuEnabled {
		return nil, nil
	}
	return g.skus[i], nil
}

// flagBufs recycles Selectable's scratch flags: every click on a product page
// asks again, and the bitset path itself allocates nothing.
var flagBufs = sync.Pool{New: func() any { return new([]bool) }}

// Selectable answers, for every active value, whether some enabled SKU with
// stock contains it together with the selected values of the other dimensions.
// The only allocation is the returned list.
func (g *Goods) Selectable(selected []int64) ([]*SelectableValue, error) {
	buf := flagBufs.Get().(*[]bool)
	defer flagBufs.Put(buf)
	flags, err := g.cat.ix.Selectable(g.avail, selected, *buf)
	*buf = flags
	if err != nil {
		return nil, err
	}
	out := make([]*SelectableValue, len(flags))
	for i, ok := range flags {
		if ok {
			out[i] = &g.cat.yes[i]
		} else {
			out[i] = &g.cat.no[i]
		}
	}
	return out, nil
}

// visibleTo applies the catalog's visibility rule to a (possibly cached)
// view: goods off shelf (or recycled) are hidden from everyone but admins.
func (g *Goods) visibleTo(v Viewer) bool {
	return v.Admin || g.Status == enums.GoodsOnShelf
}
