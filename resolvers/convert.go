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
	edges, info := connection(p.Goods, p.HasNextPage, func(g *catalog.Goods) string { return catalog.Cursor(g.ID) },
		func(cursor string, g *catalog.Goods) *graph.GoodsEdge {
			return &graph.GoodsEdge{Cursor: cursor, Node: g}
		})
	return &graph.GoodsConnection{Edges: edges, PageInfo: info}
}

// connection is the one Relay edge builder: an edge per node in order, and
// pageInfo whose endCursor is the last edge's cursor.
func connection[N, E any](nodes []N, hasNext bool, cursor func(N) string, edge func(string, N) E) ([]E, *graph.PageInfo) {
	edges := make([]E, len(nodes))
	info := &graph.PageInfo{HasNextPage: hasNext}
	for i, n := range nodes {
		c := cursor(n)
		edges[i] = edge(c, n)
		if i == len(nodes)-1 {
			info.EndCursor = &c
		}
	}
	return edges, info
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
