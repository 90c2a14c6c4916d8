package checkout

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"storefront/internal/shipping"
	"storefront/internal/vocab/money"
)

// Shipping at placement. An order's shipping fee is computed on the server
// only, from the lines resolve read (each SKU's weight and its goods'
// freight template come with them, in the same join) and the buyer's
// address, and is the order's SHIPPING adjustment (shippingAdjustment),
// priced last. The fee and a copy of the address are
// frozen on the order. An order of goods without a template needs no
// address and reads nothing more; one with an address takes the plain path
// (group.go: groupable), whose resolve reads the address once and the
// templates its goods name.

// shipTerms is what a SKU row says about shipping it.
type shipTerms struct {
	template int64 // its goods' freight template; 0: it ships free
	weight   int64 // grams per unit
}

// shipTo is where an order being placed goes, and what that costs: its
// buyer's address addressID (nil: none given) and the templates its lines
// name, read by resolve (read), the fee worked out with the lines (fee).
// A nil *shipTo (a group-commit batch) ships nowhere.
type shipTo struct {
	user      string
	addressID *int64
	addr      *shipping.OrderAddress
	templates map[int64]*shipping.Template
	charged   money.Money
}

// read reads, through q, the address (once per order) and the templates
// rows name, each only when needed.
func (t *shipTo) read(ctx context.Context, q querier, rows []*skuRow) error {
	if t == nil {
		return nil
	}
	var ids []int64
	for _, r := range rows {
		if r.ship.template != 0 {
			ids = append(ids, r.ship.template)
		}
	}
	if t.addressID != nil && t.addr == nil {
		a, err := shipping.ReadAddress(ctx, q, t.user, *t.addressID)
		if err != nil {
			return err
		}
		t.addr = a
	}
	if len(ids) == 0 || t.addr == nil {
		return nil
	}
	var err error
	t.templates, err = shipping.ReadTemplates(ctx, q, ids)
	return err
}

// fee works out the shipping fee of lines (shipping.Fee) for stamp; lines
// of goods with a template and no address are ErrAddressRequired.
func (t *shipTo) fee(lines []*line) error {
	if t != nil {
		t.charged = 0
	}
	var need []string
	for _, l := range lines {
		if l.ship.template != 0 {
			need = append(need, l.GoodsName)
		}
	}
	if len(need) == 0 {
		return nil
	}
	if t == nil || t.addr == nil {
		return fmt.Errorf("%w: %v ship under a freight template: give the order an addressId", shipping.ErrAddressRequired, need)
	}
	sl := make([]shipping.Line, len(lines))
	for i, l := range lines {
		sl[i] = shipping.Line{GoodsID: l.GoodsID, GoodsName: l.GoodsName, TemplateID: l.ship.template, Quantity: l.Quantity,
			WeightGrams: l.ship.weight, Subtotal: l.UnitPrice * money.Money(l.Quantity)}
	}
	f, err := shipping.Fee(t.addr.RegionCode, sl, t.templates)
	t.charged = f
	return err
}

// stamp writes the fee and the address onto the order being placed.
func (t *shipTo) stamp(o *Order) {
	if t == nil {
		return
	}
	o.ShippingFee, o.ShippingAddress = t.charged, t.addr
}

// addressJSON is an address as orders.shipping_address stores it.
func addressJSON(a *shipping.OrderAddress) string {
	b, err := json.Marshal(a)
	if err != nil {
		panic(err) // a struct of strings always encodes
	}
	return string(b)
}

// addressOf reads orders.shipping_address (nil: none).
func addressOf(s *string) *shipping.OrderAddress {
	if s == nil {
		return nil
	}
	var a shipping.OrderAddress
	if err := json.Unmarshal([]byte(*s), &a); err != nil {
		// Written only by addressJSON; logged rather than failing every
		// read of the order.
		slog.Error("unreadable shipping address on an order", "err", err)
		return nil
	}
	return &a
}
