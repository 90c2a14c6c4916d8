package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"entgo.io/ent/dialect/sql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"storefront/ent"
	"storefront/ent/predicate"
	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/events"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
)

// inflight counts one instance's claimed attempts per webhook (in flight or
// waiting for a slot), and holds each webhook's slots.
type inflight struct {
	mu   sync.Mutex
	n    map[int64]int
	slot map[int64]chan struct{}
	wg   sync.WaitGroup
}

func newInflight() *inflight { return &inflight{n: map[int64]int{}, slot: map[int64]chan struct{}{}} }

// slots is webhook id's semaphore: n attempts in flight at most.
func (f *inflight) slots(id int64, n int) chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.slot[id]
	if !ok {
		c = make(chan struct{}, n)
		f.slot[id] = c
	}
	return c
}

func (f *inflight) count(id int64) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[id]
}

func (f *inflight) add(id int64) {
	f.mu.Lock()
	f.n[id]++
	f.mu.Unlock()
	f.wg.Add(1)
}

// done returns how many stay claimed.
func (f *inflight) done(id int64) int {
	f.mu.Lock()
	f.n[id]--
	n := f.n[id]
	f.mu.Unlock()
	f.wg.Done()
	return n
}

// Run sends due attempts until ctx ends, then waits for those in flight
// (they are cut short and put back, to be sent again by whichever instance
// gets there first).
func (s *Service) Run(ctx context.Context) {
	r := &runner{ctx: ctx, client: s.client()}
	s.delivered = make(chan outcome, 4*recordMax)
	recorded := make(chan struct{})
	go func() { defer close(recorded); s.recordDelivered(s.delivered) }()
	defer func() { <-recorded }()
	s.setRunner(r)
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if err := s.pass(r); err != nil && ctx.Err() == nil {
			slog.Warn("webhook deliveries failed", "err", err)
		}
		select {
		case <-ctx.Done():
			s.setRunner(nil) // no Sink starts attempts after this
			s.inflight.wg.Wait()
			close(s.delivered)
			return
		case <-t.C:
		case <-s.wake:
		}
	}
}

// client is the HTTP client of every attempt: no redirects followed (a 3xx
// is an answer, and not a 2xx), the attempt's timeout, and, unless private
// addresses are allowed, no connection to one whatever DNS says.
func (s *Service) client() *http.Client {
	d := &net.Dialer{Timeout: s.cfg.Timeout}
	if !s.cfg.AllowPrivate {
		d.Control = dialGuard
	}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: s.cfg.PerWebhook,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: s.cfg.Timeout, Proxy: nil}
	return &http.Client{Transport: tr, Timeout: s.cfg.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// claimGroups is how many slots' worth of events one claim may take for a
// webhook: the claim is a commit of its own, and claiming only the free
// slots' worth (8 at a time at half the slots) made the webhook's claims
// hundreds of commits a second competing with checkout's at the hot SKU.
// The events beyond the free slots wait in this instance for one.
const claimGroups = 8

// pass claims, for each active webhook, up to claimGroups slots' worth of
// due events, when fewer than one slots' worth is left waiting, and starts
// them: each event's attempt sends when one of the webhook's slots is free,
// and a claimed row is recorded when the last of its events ends (job.go).
// Claiming per webhook keeps a backlog of one endpoint from hiding the
// others' attempts, and slots per webhook keep a slow one from holding the
// others'.
func (s *Service) pass(r *runner) error {
	ctx := r.ctx
	hooks, err := s.db.Client.Webhook.Query().Where(webhook.Active(true)).All(ctx)
	if err != nil {
		return store.Classify(fmt.Errorf("reading webhooks: %w", err))
	}
	var errs []error
	for _, h := range hooks {
		held := s.inflight.count(h.ID)
		if held > s.cfg.PerWebhook {
			continue
		}
		token, until, ds, err := s.claim(ctx, h.ID, claimGroups*s.cfg.PerWebhook-held, held)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		jobs, err := s.jobsOf(ctx, ds, token)
		if err != nil {
			errs = append(errs, err) // the rows it could not open lapse and go again
		}
		s.start(r, h, until, jobs)
	}
	return errors.Join(errs...)
}

// runner is a running sender's context and client.
type runner struct {
	ctx    context.Context
	client *http.Client
}

func (s *Service) setRunner(r *runner) {
	s.mu.Lock()
	s.run = r
	s.mu.Unlock()
}

func (s *Service) runner() *runner {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.run
}

// start sends the events of claimed jobs of webhook h, each when one of
// h's slots is free, under a claim that holds until until.
func (s *Service) start(r *runner, h *ent.Webhook, until time.Time, jobs []*job) {
	ctx := r.ctx
	slots := s.inflight.slots(h.ID, s.cfg.PerWebhook)
	for _, j := range jobs {
		for i := range j.events {
			s.inflight.add(h.ID)
			go func() {
				defer func() {
					// One slots' worth left: claim the next group now, while
					// it sends, not at the tick (each count is seen once).
					if s.inflight.done(h.ID) == s.cfg.PerWebhook {
						s.Wake()
					}
				}()
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					s.end(ctx, h, j, i, result{cut: true})
					return
				}
				defer func() { <-slots }()
				if until.Sub(s.now()) < s.cfg.Timeout+time.Second {
					// Waited so long (a slow endpoint) that the claim could
					// lapse mid-attempt: left to lapse, and sent by whichever
					// instance claims it then.
					s.end(ctx, h, j, i, result{lapse: true})
					return
				}
				status, err := s.send(ctx, r.client, h, j.events[i], j.d.Attempt)
				// Shutting down: put back (the receiver may have it: at
				// least once).
				s.end(ctx, h, j, i, result{status: status, err: err, cut: err != nil && ctx.Err() != nil})
			}()
		}
	}
}

// due: attempts of webhook id to send now, and attempts whose sender's
// claim lapsed (it died mid-attempt: at least once).
func due(id int64, now time.Time) predicate.WebhookDelivery {
	return webhookdelivery.Or(pendingDue(id, now), lapsed(id, now))
}

// pendingDue and lapsed are due's halves, each read on its own: with the
// OR in one query, MariaDB read every waiting attempt of the webhook and
// sorted them for each claim (the index cannot give the order of two
// statuses' rows), which at thousands of events per second was most of
// the webhook's database time. Alone, pendingDue is a range of the index
// (webhook_id, status, due_at) read in order and cut at the limit; lapsed
// reads only the webhook's SENDING rows (those in flight).
func pendingDue(id int64, now time.Time) predicate.WebhookDelivery {
	return webhookdelivery.And(webhookdelivery.WebhookID(id), webhookdelivery.Status(Pending), webhookdelivery.DueAtLTE(now))
}

func lapsed(id int64, now time.Time) predicate.WebhookDelivery {
	return webhookdelivery.And(webhookdelivery.WebhookID(id), webhookdelivery.Status(Sending), predicate.WebhookDelivery(lease.Lapsed(now)))
}

// lease is the sender's claim on webhook_delivery's rows: the outbox's
// lanes' mechanism (outbox.LeaseColumns), on this table's columns. A claimed row
// is also SENDING, which tells an attempt in flight from a row recorded.
var lease = outbox.LeaseColumns{Token: webhookdelivery.FieldClaim, Until: webhookdelivery.FieldClaimedUntil, By: webhookdelivery.FieldClaimedBy}

// claim takes due rows of webhook id, up to n events (a row of several
// counts its events; the first row is taken whatever its count): a
// conditional UPDATE (outbox.LeaseColumns.Take), so that of two instances only one
// sends each attempt. The claim holds until the time it returns (leaseEnd).
func (s *Service) claim(ctx context.Context, id int64, n, held int) (string, time.Time, []*ent.WebhookDelivery, error) {
	now := s.now()
	ds, err := s.db.Client.WebhookDelivery.Query().Where(lapsed(id, now)).Limit(n).All(ctx)
	if err != nil {
		return "", time.Time{}, nil, store.Classify(err)
	}
	if len(ds) < n {
		more, err := s.db.Client.WebhookDelivery.Query().Where(pendingDue(id, now)).
			Order(webhookdelivery.ByDueAt(), webhookdelivery.ByID()).Limit(n - len(ds)).All(ctx)
		if err != nil {
			return "", time.Time{}, nil, store.Classify(err)
		}
		ds = append(ds, more...)
	}
	events := 0
	for i, d := range ds {
		if i > 0 && events+d.Events > n {
			ds = ds[:i]
			break
		}
		events += d.Events
	}
	if len(ds) == 0 {
		return "", time.Time{}, nil, nil
	}
	ids := make([]int64, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	c := outbox.NewLease(s.cfg.Instance, now, s.leaseEnd(now, held, events))
	won, err := lease.Take(ctx, c, func(ctx context.Context, set func(*sql.UpdateBuilder)) (int, error) {
		return s.db.Client.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...), due(id, now)).
			SetStatus(Sending).Modify(set).Save(ctx)
	})
	if err != nil || won == 0 {
		return "", time.Time{}, nil, err
	}
	if won == len(ds) {
		// All won (one instance, or no race): the rows read are the rows
		// claimed, and the sender reads only their immutable fields.
		return c.Token, c.Until, ds, nil
	}
	// Another sender won some: ours are those with our token, read by id
	// as well (claim has no index: the token alone read the whole table).
	ds, err = s.db.Client.WebhookDelivery.Query().Where(webhookdelivery.IDIn(ids...), predicate.WebhookDelivery(lease.Of(c.Token)),
		webhookdelivery.Status(Sending)).All(ctx)
	return c.Token, c.Until, ds, store.Classify(err)
}

// leaseEnd is when a claim made at now of events, with held events of the
// webhook before them in this instance, lapses: after each event had its
// turn in a slot, PerWebhook at a time, each within the timeout. A row's
// events are recorded together, so a claim that lapsed mid-row would send
// the whole row again.
func (s *Service) leaseEnd(now time.Time, held, events int) time.Time {
	rounds := (held + events + s.cfg.PerWebhook - 1) / s.cfg.PerWebhook
	return now.Add(30*time.Second + time.Duration(rounds)*s.cfg.Timeout)
}

// putBack returns claimed row d, unsent as far as this instance knows
// (shutting down), to be sent by whichever instance gets there first.
func (s *Service) putBack(ctx context.Context, d *ent.WebhookDelivery, token string) {
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	_, _ = s.db.Client.WebhookDelivery.Update().Where(webhookdelivery.ID(d.ID), predicate.WebhookDelivery(lease.Of(token)), webhookdelivery.Status(Sending)).
		SetStatus(Pending).Modify(lease.Clear()).Save(bctx)
}

// send makes one event's request: its CloudEvent, signed for this
// attempt's timestamp.
func (s *Service) send(ctx context.Context, client *http.Client, h *ent.Webhook, e event, attempt int) (status int, err error) {
	if s.cfg.Tracing.On() {
		var span trace.Span
		ctx, span = s.attemptSpan(ctx, h, e, attempt)
		defer func() {
			if status != 0 {
				span.SetAttributes(attribute.Int("http.response.status_code", status))
			}
			tracing.End(span, err)
		}()
	}
	ts := time.Now().Unix()
	sig, err := s.sign(h, e.id, ts, e.body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(e.body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", events.ContentType)
	req.Header.Set("User-Agent", "storefront-webhooks")
	req.Header.Set("webhook-id", e.id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	s.cfg.Tracing.Inject(ctx, req.Header)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return resp.StatusCode, nil
}

// record writes the outcome of attempt d, and queues the next attempt when
// it failed and the schedule has one; nothing when d's claim was lost.
func (s *Service) record(ctx context.Context, d *ent.WebhookDelivery, token string, status int, sendErr error) error {
	now := s.now()
	return store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		up := tx.WebhookDelivery.Update().Where(webhookdelivery.ID(d.ID), webhookdelivery.Claim(token), webhookdelivery.Status(Sending)).
			SetAt(now).ClearClaimedUntil()
		if status != 0 {
			up.SetHTTPStatus(status)
		}
		var next time.Time
		switch {
		case sendErr == nil:
			up.SetStatus(Delivered)
		case d.Attempt <= len(s.cfg.Retry):
			next = now.Add(s.cfg.Retry[d.Attempt-1])
			up.SetStatus(Failed).SetError(clip(sendErr.Error())).SetNextAttemptAt(next)
		default:
			up.SetStatus(Failed).SetError(clip(sendErr.Error()))
		}
		n, err := up.Save(ctx)
		if err != nil || n == 0 || next.IsZero() {
			return err
		}
		if wait := next.Sub(now); wait < s.cfg.Interval {
			time.AfterFunc(wait, s.Wake) // a short schedule's retry is not held to the ticker
		}
		return tx.WebhookDelivery.Create().SetWebhookID(d.WebhookID).SetEventID(d.EventID).SetEventType(d.EventType).
			SetBody(d.Body).SetAttempt(d.Attempt+1).SetStatus(Pending).SetDueAt(next).SetCreatedAt(now).
			OnConflictColumns(webhookdelivery.FieldWebhookID, webhookdelivery.FieldEventID, webhookdelivery.FieldAttempt).
			Ignore().Exec(ctx)
	})
}

func clip(s string) string {
	if len(s) > 500 {
		return s[:500]
	}
	return s
}
