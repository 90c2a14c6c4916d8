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
//
// The events of an outbox row of several (a group-commit batch's, all of
// one type) are queued as one row per webhook that refers to the outbox
// row: one INSERT per batch rather than one per order, and no copy of the
// events' bytes (the sender reads them from the outbox row). The other
// events are queued one row each, with their CloudEvent.
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
		queue := func(h *ent.Webhook, eventID, typ string) *ent.WebhookDeliveryCreate {
			c := s.db.Client.WebhookDelivery.Create().SetWebhookID(h.ID).SetEventID(eventID).SetEventType(typ).
				SetAttempt(1).SetStatus(Pending).SetDueAt(now).SetCreatedAt(now)
			rows = append(rows, c)
			return c
		}
		var queued map[int64]bool // outbox rows of several, queued in this call
		for _, e := range evs {
			if e.Row.Events > 1 {
				// One row for all its events; a row the dispatcher handed in
				// part (NATS took only some) is queued whole: its events are
				// committed, and the webhooks do not wait for NATS's order.
				if queued[e.Row.ID] {
					continue
				}
				if queued == nil {
					queued = map[int64]bool{}
				}
				queued[e.Row.ID] = true
				for _, h := range hooks {
					if subscribed(h, e.Type) {
						queue(h, e.Row.EventID, e.Type).SetBody("").SetOutboxID(e.Row.ID).SetEvents(e.Row.Events)
					}
				}
				continue
			}
			var body []byte
			for _, h := range hooks {
				if !subscribed(h, e.Type) {
					continue
				}
				if body == nil {
					if body, err = events.Encode(e, s.cfg.Source); err != nil {
						return 0, err
					}
				}
				queue(h, e.ID, e.Type).SetBody(string(body))
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

func subscribed(h *ent.Webhook, typ string) bool {
	return slices.Contains(strings.Split(h.Events, ","), typ)
}

// Wake makes the sender look for due attempts now.
func (s *Service) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
