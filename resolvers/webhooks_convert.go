package resolvers

import (
	"fmt"
	"time"

	"storefront/graph"
	"storefront/internal/vocab/errs"
	"storefront/internal/webhooks"
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

// graceOf is rotateWebhookSecret's graceSeconds as a duration: absent, the
// default; out of range, refused here, before the multiplication could
// overflow into a duration in range.
func graceOf(seconds *int64) (time.Duration, error) {
	if seconds == nil {
		return webhooks.DefaultGrace, nil
	}
	if most := int64(webhooks.MaxGrace / time.Second); *seconds < 0 || *seconds > most {
		return 0, fmt.Errorf("%w: graceSeconds %d: want 0 to %d", errs.InvalidInput, *seconds, most)
	}
	return time.Duration(*seconds) * time.Second, nil
}
