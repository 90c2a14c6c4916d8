package resolvers

import (
	"context"
	"fmt"

	"storefront/graph"
	"storefront/internal/cart"
	"storefront/internal/catalog"
	"storefront/internal/platform/auth"
	"storefront/internal/vocab/errs"
)

// shopper is who a cart request comes from: the token's user, or "" for an
// anonymous visitor (who may use carts by id alone). A token that was sent
// and refused (expired, bad signature) is UNAUTHENTICATED rather than an
// anonymous visitor: the customer would otherwise build an anonymous cart
// and not see their own.
func shopper(ctx context.Context) (string, error) {
	if p := auth.FromContext(ctx); p.UserID != "" {
		return p.UserID, nil
	}
	// Require answers the bare category when no token came at all, and wraps
	// it with the reason when one was refused.
	if _, err := auth.Require(ctx); err != nil && err != errs.Unauthenticated {
		return "", err
	}
	return "", nil
}

func cartLines(in []*graph.CartLineInput) ([]cart.LineInput, error) {
	var p ids
	out := make([]cart.LineInput, len(in))
	for i, l := range in {
		out[i] = cart.LineInput{ItemID: p.opt(l.ItemID), GoodsID: p.opt(l.GoodsID), SpecValueIDs: p.list(l.SpecValueIds), Quantity: l.Quantity}
	}
	return out, p.err
}

func cartUpdates(in []*graph.CartLineUpdateInput) ([]cart.LineUpdate, error) {
	var p ids
	out := make([]cart.LineUpdate, len(in))
	for i, l := range in {
		out[i] = cart.LineUpdate{LineID: p.one(l.LineID), Quantity: l.Quantity}
	}
	return out, p.err
}

// lineGoods is the product view of a cart line's goods. A line stays in the
// cart when its goods goes off shelf (with a warning), so such a goods is
// shown as an admin would see it rather than not at all.
func (r *Resolver) lineGoods(ctx context.Context, l *cart.Line) (*catalog.Goods, error) {
	g, err := r.Catalog.Goods(ctx, viewer(ctx), l.GoodsID)
	if err == nil && g == nil {
		g, err = r.Catalog.Goods(ctx, catalog.Viewer{Admin: true}, l.GoodsID)
	}
	if err == nil && g == nil {
		err = fmt.Errorf("%w: goods %d", errs.NotFound, l.GoodsID)
	}
	return g, err
}

func lineSku(g *catalog.Goods, l *cart.Line) (*catalog.SKU, error) {
	for _, k := range g.SkuList(true) {
		if k.ID == l.ItemID {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: SKU %d", errs.NotFound, l.ItemID)
}
