package resolvers

import (
	"context"

	"storefront/graph"
	"storefront/internal/catalog"
	"storefront/internal/platform/auth"
)

func viewer(ctx context.Context) catalog.Viewer {
	return catalog.Viewer{Admin: auth.FromContext(ctx).IsAdmin()}
}

func goodsConnection(p *catalog.GoodsPage, after string) *graph.GoodsConnection {
	cursors := make(map[*catalog.Goods]string, len(p.Goods))
	for i, g := range p.Goods {
		cursors[g] = p.Cursors[i]
	}
	edges, info := connection(p.Goods, p.HasNextPage, func(g *catalog.Goods) string { return cursors[g] },
		func(cursor string, g *catalog.Goods) *graph.GoodsEdge {
			return &graph.GoodsEdge{Cursor: cursor, Node: g}
		})
	info.HasPreviousPage = after != ""
	return &graph.GoodsConnection{Edges: edges, PageInfo: info, TotalCount: p.Total}
}

// connection is the one Relay edge builder: an edge per node in order, and
// pageInfo whose startCursor and endCursor are the first and last edge's.
func connection[N, E any](nodes []N, hasNext bool, cursor func(N) string, edge func(string, N) E) ([]E, *graph.PageInfo) {
	edges := make([]E, len(nodes))
	info := &graph.PageInfo{HasNextPage: hasNext}
	for i, n := range nodes {
		c := cursor(n)
		edges[i] = edge(c, n)
		if i == 0 {
			info.StartCursor = &c
		}
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
