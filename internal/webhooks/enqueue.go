package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"storefront/ent"
	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/events"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
)

// insertChunk is how many deliveries one INSERT writes.
const insertChunk = 200

// Sink is the dispatcher's sink for webhooks: it queues each event's first
// attempt for every active webhook subscribed to its type. Nothing is sent
// here: a slow endpoint never holds the dispatcher. A repeat of an event
// (at least once) is not queued twice.
//
// The events of an outbox row of several (a group-commit batch's, all of
// one type) are queued as one row per webhook that refers to the outbox
// row: one INSERT per batch rather than one per order, and no copy of the
// events' bytes (the sender reads them from the outbox row). The other
// events are queued one row each, with their CloudEvent.
//
// When this instance's sender runs and has room for them (claimGroups
// slots' worth per webhook), the rows are queued claimed by it (SENDING,
// with a lease) and their attempts start from the events in hand: no
// claim UPDATE of their own, which at the hot SKU's rate was a commit as
// frequent as the batches' own (docs/benchmarks.md). The rest
// wait PENDING for a sender's pass, as do rows whose instance died.
func (s *Service) Sink() outbox.BatchSink {
	return func(ctx context.Context, evs []outbox.Event) (int, error) {
		hooks, err := s.db.Client.Webhook.Query().Where(webhook.Active(true)).All(ctx)
		if err != nil {
			return 0, store.Classify(fmt.Errorf("reading webhooks: %w", err))
		}
		if len(hooks) == 0 {
			return len(evs), nil
		}
		q, err := s.plan(evs, hooks)
		if err != nil {
			return 0, err
		}
		for c := range slices.Chunk(q.rows, insertChunk) {
			err := s.db.Client.WebhookDelivery.CreateBulk(c...).
				OnConflictColumns(webhookdelivery.FieldWebhookID, webhookdelivery.FieldEventID, webhookdelivery.FieldAttempt).
				Ignore().Exec(ctx)
			if err != nil {
				// The chunks before went in; the dispatcher sends every
				// event again, and those are not queued twice.
				return 0, store.Classify(fmt.Errorf("queueing webhook deliveries: %w", err))
			}
		}
		if q.pending {
			s.Wake()
		}
		if len(q.claimed) > 0 {
			if err := s.startClaimed(ctx, q, hooks); err != nil {
				// Queued all the same: the claimed rows lapse and are sent.
				slog.Warn("starting webhook deliveries failed", "err", err)
			}
		}
		return len(evs), nil
	}
}

// queued is what one Sink call queues: rows to insert, and of them those
// claimed by this instance's sender (by webhook and event_id), with the
// events each will send and the claim's token and lease per webhook.
type queued struct {
	rows    []*ent.WebhookDeliveryCreate
	pending bool // some rows wait for a pass
	token   string
	claimed map[int64]map[string][]event
	until   map[int64]time.Time
}

// plan builds the rows for evs and hooks (Sink).
func (s *Service) plan(evs []outbox.Event, hooks []*ent.Webhook) (*queued, error) {
	now := s.now()
	// One claim for every webhook's rows, each webhook's lapsing at its own
	// time (until).
	q := &queued{token: outbox.NewLease(s.cfg.Instance, now, time.Time{}).Token, claimed: map[int64]map[string][]event{}, until: map[int64]time.Time{}}
	r := s.runner()
	room, admitted := map[int64]int{}, map[int64]int{}
	claimedRows := map[int64][]*ent.WebhookDeliveryCreate{}
	if r != nil {
		for _, h := range hooks {
			room[h.ID] = claimGroups*s.cfg.PerWebhook - s.inflight.count(h.ID)
		}
	}
	// The events of each outbox row of several in evs: a row handed in
	// part (the webhooks' lane hands whole rows, but a caller may not) is
	// queued whole, PENDING, for the sender to read from the outbox (its
	// events are committed).
	inRow := map[int64]int{}
	for _, e := range evs {
		if e.Row.Events > 1 {
			inRow[e.Row.ID]++
		}
	}
	var bodies []event // the current group's CloudEvents, made once for every webhook
	encode := func(group []outbox.Event) error {
		if bodies != nil {
			return nil
		}
		for _, e := range group {
			b, err := events.Encode(e, s.cfg.Source)
			if err != nil {
				return err
			}
			bodies = append(bodies, event{id: e.ID, body: b, trace: e.Trace, typ: e.Type})
		}
		return nil
	}
	queue := func(h *ent.Webhook, eventID string, group []outbox.Event, whole bool) (*ent.WebhookDeliveryCreate, error) {
		c := s.db.Client.WebhookDelivery.Create().SetWebhookID(h.ID).SetEventID(eventID).SetEventType(group[0].Type).
			SetAttempt(1).SetDueAt(now).SetCreatedAt(now)
		q.rows = append(q.rows, c)
		if !whole || room[h.ID] < len(group) {
			c.SetStatus(Pending)
			q.pending = true
			return c, nil
		}
		if err := encode(group); err != nil {
			return nil, err
		}
		room[h.ID] -= len(group)
		admitted[h.ID] += len(group)
		c.SetStatus(Sending).SetClaim(q.token)
		if s.cfg.Instance != "" {
			c.SetClaimedBy(s.cfg.Instance)
		}
		claimedRows[h.ID] = append(claimedRows[h.ID], c)
		if q.claimed[h.ID] == nil {
			q.claimed[h.ID] = map[string][]event{}
		}
		q.claimed[h.ID][eventID] = bodies
		return c, nil
	}
	for i := 0; i < len(evs); {
		e := evs[i]
		group, whole := evs[i:i+1], true
		if e.Row.Events > 1 {
			j := i + 1
			for j < len(evs) && evs[j].Row.ID == e.Row.ID {
				j++
			}
			group, whole = evs[i:j], j-i == e.Row.Events && inRow[e.Row.ID] == e.Row.Events
		}
		i += len(group)
		bodies = nil
		for _, h := range hooks {
			if !subscribed(h, e.Type) {
				continue
			}
			if e.Row.Events > 1 {
				c, err := queue(h, e.Row.EventID, group, whole)
				if err != nil {
					return nil, err
				}
				c.SetBody("").SetOutboxID(e.Row.ID).SetEvents(e.Row.Events)
				continue
			}
			if err := encode(group); err != nil {
				return nil, err
			}
			c, err := queue(h, e.ID, group, true)
			if err != nil {
				return nil, err
			}
			c.SetBody(string(bodies[0].body))
		}
	}
	for id, cs := range claimedRows {
		until := s.leaseEnd(now, s.inflight.count(id), admitted[id])
		q.until[id] = until
		for _, c := range cs {
			c.SetClaimedUntil(until)
		}
	}
	return q, nil
}

// startClaimed starts the attempts of the rows q queued claimed, those the
// insert wrote (a repeat of an event already queued is not ours): read
// back by token, webhook and event_id (the unique index). When the sender
// stopped meanwhile, they are put back for whichever instance comes first.
func (s *Service) startClaimed(ctx context.Context, q *queued, hooks []*ent.Webhook) error {
	var hookIDs []int64
	var eventIDs []string
	for id, m := range q.claimed {
		hookIDs = append(hookIDs, id)
		for e := range m {
			eventIDs = append(eventIDs, e)
		}
	}
	ds, err := s.db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookIDIn(hookIDs...),
		webhookdelivery.EventIDIn(eventIDs...), webhookdelivery.Attempt(1), webhookdelivery.Claim(q.token)).All(ctx)
	if err != nil {
		return store.Classify(fmt.Errorf("reading queued webhook deliveries: %w", err))
	}
	jobs := map[int64][]*job{}
	for _, d := range ds {
		evs := q.claimed[d.WebhookID][d.EventID]
		j := &job{d: d, token: q.token, events: evs, res: make([]result, len(evs)), left: len(evs)}
		jobs[d.WebhookID] = append(jobs[d.WebhookID], j)
	}
	// Under the lock that Run's shutdown takes before it waits for the
	// attempts in flight: these are added before that wait, or not at all.
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.run == nil {
		for _, js := range jobs {
			for _, j := range js {
				s.putBack(ctx, j.d, j.token)
			}
		}
		return nil
	}
	for _, h := range hooks {
		if js := jobs[h.ID]; len(js) > 0 {
			s.start(s.run, h, q.until[h.ID], js)
			s.startedQueued.Add(int64(len(js)))
		}
	}
	return nil
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
