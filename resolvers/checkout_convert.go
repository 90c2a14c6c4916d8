package resolvers

import (
	"context"

	"storefront/auth"
	"storefront/checkout"
	"storefront/graph"
)

// buyer is the caller allowed to order: a customer or an admin.
func buyer(ctx context.Context) (auth.Principal, error) {
	return auth.Require(ctx, auth.Customer, auth.Admin)
}

func placeInput(p auth.Principal, in graph.PlaceOrderInput, key *string, header string) checkout.PlaceInput {
	out := checkout.PlaceInput{UserID: p.UserID, Remark: deref(in.Remark), IdempotencyKey: header}
	if key != nil {
		out.IdempotencyKey = *key // the argument wins over the header
	}
	out.Items = make([]checkout.ItemInput, len(in.Items))
	for i, it := range in.Items {
		out.Items[i] = checkout.ItemInput{ItemID: it.ItemID, GoodsID: it.GoodsID, SpecValueIDs: it.SpecValueIds, Quantity: it.Quantity}
	}
	return out
}

func orderConnection(p *checkout.OrderPage) *graph.OrderConnection {
	c := &graph.OrderConnection{Edges: make([]*graph.OrderEdge, len(p.Orders)), PageInfo: &graph.PageInfo{HasNextPage: p.HasNextPage}}
	for i, o := range p.Orders {
		c.Edges[i] = &graph.OrderEdge{Cursor: checkout.Cursor(o.ID), Node: o}
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return c
}
