package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"storefront/checkout"
	"storefront/ent"
	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/events"
	"storefront/store"
)

// insertChunk is how many deliveries one INSERT writes.
const insertChunk = 200

// Sink is the dispatcher's sink for webhooks: it queues each event's first
// attempt for every active webhook subscribed to its type, and wakes the
// sender. Nothing is sent here: a slow endpoint never holds the dispatcher.
// A repeat of an event (at least once) is not queued twice.
func (s *Service) Sink() checkout.BatchSink {
	return func(ctx context.Context, evs []checkout.Event) (int, error) {
		hooks, err := s.db.Client.Webhook.Query().Where(webhook.Active(true)).
			Select(webhook.FieldID, webhook.FieldEvents).All(ctx)
		if err != nil {
			return 0, store.Classify(fmt.Errorf("reading webhooks: %w", err))
		}
		if len(hooks) == 0 {
			return len(evs), nil
		}
		now := s.now()
		var rows []*ent.WebhookDeliveryCreate
		for _, e := range evs {
			var body []byte
			for _, h := range hooks {
				if !slices.Contains(strings.Split(h.Events, ","), e.Type) {
					continue
				}
				if body == nil {
					if body, err = events.Encode(e, s.cfg.Source); err != nil {
						return 0, err
					}
				}
				rows = append(rows, s.db.Client.WebhookDelivery.Create().SetWebhookID(h.ID).SetEventID(e.ID).
					SetEventType(e.Type).SetBody(string(body)).SetAttempt(1).SetStatus(Pending).
					SetDueAt(now).SetCreatedAt(now))
			}
		}
		for c := range slices.Chunk(rows, insertChunk) {
			err := s.db.Client.WebhookDelivery.CreateBulk(c...).
				OnConflictColumns(webhookdelivery.FieldWebhookID, webhookdelivery.FieldEventID, webhookdelivery.FieldAttempt).
				Ignore().Exec(ctx)
			if err != nil {
				// The chunks before went in; the dispatcher sends every
				// event again, and those are not queued twice.
				return 0, store.Classify(fmt.Errorf("queueing webhook deliveries: %w", err))
			}
		}
		if len(rows) > 0 {
			s.Wake()
		}
		return len(evs), nil
	}
}

// Wake makes the sender look for due attempts now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
