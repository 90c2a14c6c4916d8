package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"storefront/graph"
	"storefront/internal/cart"
	"storefront/internal/checkout"
	"storefront/internal/shipping"
)

func addressInput(in graph.AddressInput) shipping.AddressInput {
	return shipping.AddressInput{IsDefault: deref(in.IsDefault), OrderAddress: shipping.OrderAddress{
		Name: in.Name, Phone: in.Phone, RegionCode: in.RegionCode, Line: in.Line, PostalCode: deref(in.PostalCode)}}
}

func templateInput(in graph.CreateShippingTemplateInput) shipping.TemplateInput {
	out := shipping.TemplateInput{Name: in.Name, ChargeBy: in.ChargeBy, FreeOver: in.FreeOver, Rules: make([]shipping.Rule, len(in.Rules))}
	for i, r := range in.Rules {
		out.Rules[i] = shipping.Rule{RegionCodes: r.RegionCodes, FirstUnits: r.FirstUnits, FirstFee: r.FirstFee, NextUnits: r.NextUnits, NextFee: r.NextFee}
	}
	return out
}

func shipInput(in graph.ShipOrderInput) (checkout.ShipInput, error) {
	out := checkout.ShipInput{OrderSn: in.OrderSn, Carrier: in.Carrier, TrackingNo: in.TrackingNo}
	var p ids
	if in.Lines != nil {
		out.Lines = make([]checkout.ShipLine, len(in.Lines))
		for i, l := range in.Lines {
			out.Lines[i] = checkout.ShipLine{ItemID: p.one(l.ItemID), Quantity: l.Quantity}
		}
	}
	return out, p.err
}

// shipmentsOf reads the shipments of a page of orders in one query when the
// operation asks for them (edges { node { shipments } }), instead of one
// per order.
func (r *Resolver) shipmentsOf(ctx context.Context, orders []*checkout.Order) error {
	if !selectedPath(ctx, "edges", "node", "shipments") {
		return nil
	}
	return r.Checkout.LoadShipments(ctx, orders)
}

// selectedPath says whether the field's selection holds path (through
// fragments).
func selectedPath(ctx context.Context, path ...string) bool {
	oc := graphql.GetOperationContext(ctx)
	fields := graphql.CollectFieldsCtx(ctx, nil)
	for i, name := range path {
		var next *graphql.CollectedField
		for j := range fields {
			if fields[j].Name == name {
				next = &fields[j]
				break
			}
		}
		if next == nil {
			return false
		}
		if i == len(path)-1 {
			return true
		}
		fields = graphql.CollectFields(oc, next.Selections, nil)
	}
	return false
}

func orderFilter(f *graph.OrderFilter) checkout.OrderFilter {
	if f == nil {
		return checkout.OrderFilter{}
	}
	return checkout.OrderFilter{Statuses: f.Status, OrderSn: deref(f.OrderSn), UserID: deref(f.UserID),
		CreatedAfter: f.CreatedAfter, CreatedBefore: f.CreatedBefore}
}

func cartItems(lines []*cart.Line) []shipping.Item {
	out := make([]shipping.Item, len(lines))
	for i, l := range lines {
		out[i] = shipping.Item{ItemID: l.ItemID, Quantity: l.Quantity, UnitPrice: l.UnitPrice}
	}
	return out
}
