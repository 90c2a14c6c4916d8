package resolvers

import (
	"storefront/graph"
	"storefront/webhooks"
)

// deliveryConnection is a page of delivery attempts as a connection.
func deliveryConnection(ds []*webhooks.Delivery, cursors []string, more bool) *graph.WebhookDeliveryConnection {
	c := &graph.WebhookDeliveryConnection{Edges: make([]*graph.WebhookDeliveryEdge, len(ds)), PageInfo: &graph.PageInfo{HasNextPage: more}}
	for i, d := range ds {
		c.Edges[i] = &graph.WebhookDeliveryEdge{Cursor: cursors[i], Node: d}
	}
	if len(cursors) > 0 {
		c.PageInfo.StartCursor = &cursors[0]
		c.PageInfo.EndCursor = &cursors[len(cursors)-1]
	}
	return c
}
