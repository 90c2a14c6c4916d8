package live

import (
	"context"

	"storefront/internal/catalog"
)

// Relay sits between a subscription's channel from the hub and the one
// GraphQL reads, so that the transport can see each view before GraphQL
// marshals it and answer with bytes already marshalled for the same view and
// the same operation (internal/server/live_share.go): with a thousand subscribers of a
// goods, one of them marshals a change and the others reuse it.
type Relay struct {
	// In is the hub's channel (nil until Subscribe set it); Out is what
	// GraphQL reads: the holder of the relay forwards views from In to Out.
	In  <-chan *catalog.Goods
	Out chan *catalog.Goods
}

type relayKey struct{}

// WithRelay returns ctx carrying a new relay: Subscribe under that context
// hands its channel to the relay and returns the relay's Out instead.
func WithRelay(ctx context.Context) (context.Context, *Relay) {
	r := &Relay{Out: make(chan *catalog.Goods, 1)}
	return context.WithValue(ctx, relayKey{}, r), r
}

// relayed returns ch, or the relay's Out once the relay in ctx took ch.
func relayed(ctx context.Context, ch chan *catalog.Goods) <-chan *catalog.Goods {
	if r, ok := ctx.Value(relayKey{}).(*Relay); ok && r.In == nil {
		r.In = ch
		return r.Out
	}
	return ch
}
