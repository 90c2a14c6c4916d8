package resolvers

import (
	"storefront/graph"
	"storefront/internal/checkout"
)

// placeInput leaves the buyer (UserID) to the resolver: the ids are parsed
// before the token is checked, as they were at argument coercion.
func placeInput(in graph.PlaceOrderInput, key *string, header string) (checkout.PlaceInput, error) {
	out := checkout.PlaceInput{Remark: deref(in.Remark), IdempotencyKey: header}
	if key != nil {
		out.IdempotencyKey = *key // the argument wins over the header
	}
	var p ids
	out.AddressID = p.opt(in.AddressID)
	out.Items = make([]checkout.ItemInput, len(in.Items))
	for i, it := range in.Items {
		out.Items[i] = checkout.ItemInput{ItemID: p.opt(it.ItemID), GoodsID: p.opt(it.GoodsID), SpecValueIDs: p.list(it.SpecValueIds),
			Quantity: it.Quantity, PoolID: p.opt(it.PoolID)}
	}
	out.UserCouponID = p.opt(in.UserCouponID)
	return out, p.err
}

func orderConnection(p *checkout.OrderPage) *graph.OrderConnection {
	edges, info := connection(p.Orders, p.HasNextPage, func(o *checkout.Order) string { return checkout.Cursor(o.ID) },
		func(cursor string, o *checkout.Order) *graph.OrderEdge {
			return &graph.OrderEdge{Cursor: cursor, Node: o}
		})
	return &graph.OrderConnection{Edges: edges, PageInfo: info}
}
