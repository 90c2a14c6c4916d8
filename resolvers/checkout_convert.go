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
		out.Items[i] = checkout.ItemInput{ItemID: it.ItemID, GoodsID: it.GoodsID, SpecValueIDs: it.SpecValueIds, Quantity: it.Quantity, PoolID: it.PoolID}
	}
	return out
}

func orderConnection(p *checkout.OrderPage) *graph.OrderConnection {
	edges, info := connection(p.Orders, p.HasNextPage, func(o *checkout.Order) string { return checkout.Cursor(o.ID) },
		func(cursor string, o *checkout.Order) *graph.OrderEdge {
			return &graph.OrderEdge{Cursor: cursor, Node: o}
		})
	return &graph.OrderConnection{Edges: edges, PageInfo: info}
}
