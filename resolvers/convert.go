package resolvers

import (
	"context"

	"storefront/auth"
	"storefront/catalog"
	"storefront/graph"
)

func viewer(ctx context.Context) catalog.Viewer {
	return catalog.Viewer{Admin: auth.FromContext(ctx).IsAdmin()}
}

func goodsConnection(p *catalog.GoodsPage) *graph.GoodsConnection {
	c := &graph.GoodsConnection{Edges: make([]*graph.GoodsEdge, len(p.Goods)), PageInfo: &graph.PageInfo{HasNextPage: p.HasNextPage}}
	for i, g := range p.Goods {
		c.Edges[i] = &graph.GoodsEdge{Cursor: catalog.Cursor(g.ID), Node: g}
	}
	if n := len(c.Edges); n > 0 {
		c.PageInfo.EndCursor = &c.Edges[n-1].Cursor
	}
	return c
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
