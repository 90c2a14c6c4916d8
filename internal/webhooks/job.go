package webhooks

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"storefront/ent"
	entoutbox "storefront/ent/outbox"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/events"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
)

// event is one event to POST: its id (webhook-id) and its CloudEvent.
type event struct {
	id   string
	body []byte
	// trace is the traceparent of the change that raised it (tracing on;
	// "" otherwise): each attempt is a span of that trace.
	trace string
	typ   string
}

// result is how one event's attempt ended.
type result struct {
	status int   // the endpoint's HTTP status (0: no answer)
	err    error // nil: delivered
	cut    bool  // not sent, or cut short: shutting down
	lapse  bool  // not sent: the claim would have lapsed mid-attempt
}

// job is one claimed row's work: the attempts of its events (one, or an
// outbox row's several), each sent in a slot of the webhook, and recorded
// together when the last one ends, in one write for the row when they all
// ended alike.
type job struct {
	d      *ent.WebhookDelivery
	token  string
	events []event
	mu     sync.Mutex
	res    []result
	left   int
}

// jobsOf returns the work of claimed rows ds: a row of one event carries
// its CloudEvent; a row of several reads its events from its outbox row
// (one query for all of them). A row whose outbox row cannot be read is
// left out, with an error: its claim lapses and it is tried again.
func (s *Service) jobsOf(ctx context.Context, ds []*ent.WebhookDelivery, token string) ([]*job, error) {
	var rowIDs []int64
	for _, d := range ds {
		if d.OutboxID != nil {
			rowIDs = append(rowIDs, *d.OutboxID)
		}
	}
	rows, err := s.outboxEvents(ctx, rowIDs)
	jobs := make([]*job, 0, len(ds))
	var bad []error
	for _, d := range ds {
		j := &job{d: d, token: token}
		if d.OutboxID == nil {
			j.events = []event{{id: d.EventID, body: []byte(d.Body), typ: d.EventType}}
			if s.cfg.Tracing.On() {
				j.events[0].trace = traceOf(j.events[0].body)
			}
		} else {
			evs, ok := rows[*d.OutboxID]
			if !ok {
				bad = append(bad, fmt.Errorf("webhook delivery %d: outbox row %d: not read", d.ID, *d.OutboxID))
				continue
			}
			for _, e := range evs {
				b, err := events.Encode(e, s.cfg.Source)
				if err != nil {
					bad = append(bad, fmt.Errorf("webhook delivery %d: %w", d.ID, err))
					j.events = nil
					break
				}
				j.events = append(j.events, event{id: e.ID, body: b, trace: e.Trace, typ: e.Type})
			}
			if j.events == nil {
				continue
			}
		}
		j.res, j.left = make([]result, len(j.events)), len(j.events)
		jobs = append(jobs, j)
	}
	if err != nil {
		bad = append(bad, err)
	}
	if len(bad) > 0 {
		return jobs, fmt.Errorf("opening claimed webhook deliveries: %w", bad[0])
	}
	return jobs, nil
}

// outboxEvents reads the events of outbox rows ids (outbox.RowEvents),
// by row id; a row it could not read or parse is absent.
func (s *Service) outboxEvents(ctx context.Context, ids []int64) (map[int64][]outbox.Event, error) {
	out := map[int64][]outbox.Event{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.Client.Outbox.Query().Where(entoutbox.IDIn(ids...)).All(ctx)
	if err != nil {
		return out, store.Classify(fmt.Errorf("reading outbox rows: %w", err))
	}
	var bad error
	for _, r := range rows {
		evs, err := outbox.RowEvents(r)
		if err != nil {
			bad = err
			continue
		}
		out[r.ID] = evs
	}
	return out, bad
}

// end records how event i of job j's attempt ended; the last of the job's
// events to end settles the row.
func (s *Service) end(ctx context.Context, h *ent.Webhook, j *job, i int, r result) {
	j.mu.Lock()
	j.res[i] = r
	j.left--
	last := j.left == 0
	j.mu.Unlock()
	if last {
		s.settle(ctx, h, j)
	}
}

// settle records job j once all its events' attempts ended: a row that
// was cut short goes back (sent again: at least once), one that would
// have lapsed is left to lapse; a row whose events were all delivered
// with one status is recorded with the other delivered rows in a batch
// (recorder.go); the rest are recorded here.
func (s *Service) settle(ctx context.Context, h *ent.Webhook, j *job) {
	if slices.ContainsFunc(j.res, func(r result) bool { return r.cut }) {
		s.putBack(ctx, j.d, j.token)
		return
	}
	if slices.ContainsFunc(j.res, func(r result) bool { return r.lapse }) {
		return
	}
	if r0 := j.res[0]; r0.err == nil && !slices.ContainsFunc(j.res, func(r result) bool { return r.err != nil || r.status != r0.status }) {
		s.delivered <- outcome{id: j.d.ID, token: j.token, status: r0.status}
		return
	}
	// The attempts happened: record them even when shutdown began meanwhile.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var err error
	if j.d.OutboxID == nil {
		err = s.record(rctx, j.d, j.token, j.res[0].status, j.res[0].err)
	} else {
		err = s.recordRow(rctx, j)
	}
	if err != nil {
		// The claim lapses and the attempts are sent again.
		slog.Warn("recording webhook delivery failed", "webhook_id", h.ID, "event_id", j.d.EventID, "err", err)
	}
}

// recordRow records the first attempt of an outbox row's events whose
// attempts did not all end alike: the row keeps the events delivered with
// its most common status; each other event gets a row of its own for its
// attempt 1 (listed in the row's split), and a failed one its attempt 2
// when the schedule has one, as any event's failure does. Nothing when
// the row's claim was lost.
func (s *Service) recordRow(ctx context.Context, j *job) error {
	now, d := s.now(), j.d
	count := map[int]int{}
	code := 0 // the row's status: the most common among the delivered
	for _, r := range j.res {
		if r.err == nil {
			if count[r.status]++; count[r.status] > count[code] {
				code = r.status
			}
		}
	}
	var split []string
	var next time.Time
	for i, r := range j.res {
		if r.err != nil || r.status != code {
			split = append(split, strconv.Itoa(i))
			if r.err != nil && len(s.cfg.Retry) > 0 {
				next = now.Add(s.cfg.Retry[0])
			}
		}
	}
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		up := tx.WebhookDelivery.Update().Where(webhookdelivery.ID(d.ID), webhookdelivery.Claim(j.token), webhookdelivery.Status(Sending)).
			SetAt(now).ClearClaimedUntil().SetSplit(strings.Join(split, ","))
		if code != 0 {
			up.SetStatus(Delivered).SetHTTPStatus(code)
		} else {
			// Every event is listed by a row of its own: this one lists none.
			up.SetStatus(Failed)
		}
		n, err := up.Save(ctx)
		if err != nil || n == 0 {
			return err
		}
		var rows []*ent.WebhookDeliveryCreate
		for i, r := range j.res {
			if r.err == nil && r.status == code {
				continue
			}
			e := j.events[i]
			c := tx.WebhookDelivery.Create().SetWebhookID(d.WebhookID).SetEventID(e.id).SetEventType(d.EventType).
				SetBody(string(e.body)).SetAttempt(1).SetDueAt(d.DueAt).SetAt(now).SetCreatedAt(now)
			if r.status != 0 {
				c.SetHTTPStatus(r.status)
			}
			rows = append(rows, c)
			if r.err == nil {
				c.SetStatus(Delivered)
				continue
			}
			c.SetStatus(Failed).SetError(clip(r.err.Error()))
			if !next.IsZero() {
				c.SetNextAttemptAt(next)
				rows = append(rows, tx.WebhookDelivery.Create().SetWebhookID(d.WebhookID).SetEventID(e.id).
					SetEventType(d.EventType).SetBody(string(e.body)).SetAttempt(2).SetStatus(Pending).SetDueAt(next).SetCreatedAt(now))
			}
		}
		for c := range slices.Chunk(rows, insertChunk) {
			err := tx.WebhookDelivery.CreateBulk(c...).
				OnConflictColumns(webhookdelivery.FieldWebhookID, webhookdelivery.FieldEventID, webhookdelivery.FieldAttempt).
				Ignore().Exec(ctx)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && !next.IsZero() {
		if wait := next.Sub(now); wait < s.cfg.Interval {
			time.AfterFunc(wait, s.Wake) // a short schedule's retry is not held to the ticker
		}
	}
	return err
}
