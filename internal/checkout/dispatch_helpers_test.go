package checkout

import (
	"context"

	"storefront/internal/platform/outbox"
)

// Event is an outbox event as the dispatcher hands it out: what the tests
// of the events checkout writes look at.
type Event = outbox.Event

// Dispatch hands up to batch outbox rows of s's database to sink on the
// broker's lane (outbox.Dispatcher.Dispatch), as serve's dispatcher does.
func (s *Service) Dispatch(ctx context.Context, sink outbox.Sink, batch int) (int, error) {
	return outbox.New(s.db, outbox.Config{}).Dispatch(ctx, sink, batch)
}
