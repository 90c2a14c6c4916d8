package resolvers

import (
	"context"

	"storefront/graph"
	"storefront/internal/aftersale"
	"storefront/internal/platform/auth"
	"storefront/internal/vocab/enums"
)

// requestInput converts requestAfterSale's input; the argument's key wins
// over the Idempotency-Key header, as for placeOrder.
func requestInput(in graph.RequestAfterSaleInput, key *string, header string) (aftersale.RequestInput, error) {
	out := aftersale.RequestInput{OrderSn: in.OrderSn, Type: in.Type, Reason: in.Reason, IdempotencyKey: header}
	if key != nil {
		out.IdempotencyKey = *key
	}
	var p ids
	for _, l := range in.Lines {
		out.Lines = append(out.Lines, aftersale.LineInput{ItemID: p.one(l.ItemID), Quantity: l.Quantity})
	}
	return out, p.err
}

// actor is the caller as an after-sale's log records it: a customer or an
// admin (admins act on anyone's).
func actor(ctx context.Context, roles ...auth.Role) (aftersale.Actor, error) {
	p, err := auth.Require(ctx, roles...)
	if err != nil {
		return aftersale.Actor{}, err
	}
	return aftersale.Actor{ID: p.UserID, Admin: p.Role == auth.Admin}, nil
}

func afterSaleConnection(p *aftersale.Page) *graph.AfterSaleConnection {
	edges, info := connection(p.AfterSales, p.HasNextPage, aftersale.Cursor,
		func(cursor string, a *aftersale.AfterSale) *graph.AfterSaleEdge {
			return &graph.AfterSaleEdge{Cursor: cursor, Node: a}
		})
	return &graph.AfterSaleConnection{Edges: edges, PageInfo: info}
}

func afterSaleStatus(f *graph.AfterSaleFilter) *enums.AfterSaleStatus {
	if f == nil {
		return nil
	}
	return f.Status
}
