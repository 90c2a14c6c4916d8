package webhooks

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"storefront/ent"
	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/paging"
)

// Deliveries returns a page of webhook id's attempts, newest row first:
// one entry per attempt of one event. A row of an outbox row's several
// events lists each of them (those its split does not name, which have
// rows of their own), in the outbox row's order; an entry's cursor is its
// row's id and its index in the row, so a page may end inside a row and
// the next go on from there.
func (s *Service) Deliveries(ctx context.Context, id int64, first int, after string) ([]*Delivery, []string, bool, error) {
	n, err := paging.Size(first)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%w: %v", errs.InvalidInput, err)
	}
	if ok, err := s.db.Client.Webhook.Query().Where(webhook.ID(id)).Exist(ctx); err != nil {
		return nil, nil, false, store.Classify(err)
	} else if !ok {
		return nil, nil, false, fmt.Errorf("%w: webhook %d", errs.NotFound, id)
	}
	below, from := int64(math.MaxInt64), -1 // rows with id <= below; in row below, indexes > from
	if after != "" {
		if below, from, err = paging.DecodeAt("delivery", after); err != nil {
			return nil, nil, false, fmt.Errorf("%w: %v", errs.InvalidInput, err)
		}
	}
	var (
		out     []*Delivery
		cursors []string
	)
	// Rows are read n+1 at a time until n+1 entries are found (a row of
	// several gives several, a row whose events all have rows of their own
	// none) or none are left.
	for len(out) <= n {
		rows, err := s.db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(id), webhookdelivery.IDLTE(below)).
			Order(ent.Desc(webhookdelivery.FieldID)).Limit(n + 1).All(ctx)
		if err != nil {
			return nil, nil, false, store.Classify(fmt.Errorf("listing deliveries: %w", err))
		}
		ds, cs, err := s.entries(ctx, rows, below, from)
		if err != nil {
			return nil, nil, false, err
		}
		out, cursors = append(out, ds...), append(cursors, cs...)
		if len(rows) < n+1 {
			break
		}
		below, from = rows[len(rows)-1].ID-1, -1
	}
	out, more := paging.Trim(out, n)
	return out, cursors[:len(out)], more, nil
}

// entries lists rows (newest first) as attempts of one event each, leaving
// out, in row skip, the entries up to index from (the page before).
func (s *Service) entries(ctx context.Context, rows []*ent.WebhookDelivery, skip int64, from int) ([]*Delivery, []string, error) {
	var rowIDs []int64
	for _, r := range rows {
		if r.OutboxID != nil {
			rowIDs = append(rowIDs, *r.OutboxID)
		}
	}
	evs, err := s.outboxEvents(ctx, rowIDs)
	if err != nil {
		return nil, nil, err
	}
	var (
		out     []*Delivery
		cursors []string
	)
	for _, r := range rows {
		at := r.DueAt
		if r.At != nil {
			at = *r.At
		}
		if r.OutboxID == nil {
			if r.ID == skip && from >= 0 {
				continue
			}
			out = append(out, &Delivery{ID: r.ID, EventID: r.EventID, EventType: r.EventType, Attempt: r.Attempt, Status: r.Status,
				HTTPStatus: r.HTTPStatus, Error: r.Error, At: at, NextAttemptAt: r.NextAttemptAt})
			cursors = append(cursors, paging.CursorAt("delivery", r.ID, 0))
			continue
		}
		es, ok := evs[*r.OutboxID]
		if !ok { // nothing deletes outbox rows: only a broken database gets here
			return nil, nil, fmt.Errorf("webhook delivery %d: outbox row %d not found", r.ID, *r.OutboxID)
		}
		apart := map[int]bool{}
		if r.Split != "" {
			for _, f := range strings.Split(r.Split, ",") {
				i, _ := strconv.Atoi(f)
				apart[i] = true
			}
		}
		for i, e := range es {
			if apart[i] || (r.ID == skip && i <= from) {
				continue
			}
			out = append(out, &Delivery{ID: r.ID, EventID: e.ID, EventType: r.EventType, Attempt: r.Attempt, Status: r.Status,
				HTTPStatus: r.HTTPStatus, Error: r.Error, At: at, NextAttemptAt: r.NextAttemptAt})
			cursors = append(cursors, paging.CursorAt("delivery", r.ID, i))
		}
	}
	return out, cursors, nil
}
