package webhooks

import (
	"context"
	"log/slog"
	"time"

	"storefront/ent"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/store"
)

// A delivered attempt, waiting to be recorded with others.
type outcome struct {
	id     int64
	token  string
	status int
}

// Recording in batches: one transaction (one commit, one fsync) for up to
// recordMax delivered rows, or what recordWait gathered. One transaction
// per attempt made the webhook's bookkeeping compete with checkout's
// commits (bench/events, docs/benchmarks.md); with a batch's events in one
// row and its claim made as it is queued, these commits were nearly all the
// webhook's, so they wait longer: a delivered row shows SENDING for up to
// recordWait more, well within its lease.
const (
	recordMax  = 200
	recordWait = 250 * time.Millisecond
)

// recordDelivered records the outcomes from in until it is closed.
func (s *Service) recordDelivered(in <-chan outcome) {
	var batch []outcome
	t := time.NewTicker(recordWait)
	defer t.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.markDelivered(ctx, batch); err != nil {
			// Their claims lapse and they are sent again (at least once).
			slog.Warn("recording webhook deliveries failed", "count", len(batch), "err", err)
		}
		batch = batch[:0]
	}
	for {
		select {
		case o, ok := <-in:
			if !ok {
				flush()
				return
			}
			batch = append(batch, o)
			if len(batch) >= recordMax {
				flush()
			}
		case <-t.C:
			flush()
		}
	}
}

// markDelivered sets the attempts of batch DELIVERED, grouped by HTTP
// status, where their claims still hold.
func (s *Service) markDelivered(ctx context.Context, batch []outcome) error {
	now := s.now()
	byStatus := map[int][]outcome{}
	for _, o := range batch {
		byStatus[o.status] = append(byStatus[o.status], o)
	}
	return store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		for code, os := range byStatus {
			ids, tokens := make([]int64, len(os)), make([]string, 0, 4)
			seen := map[string]bool{}
			for i, o := range os {
				ids[i] = o.id
				if !seen[o.token] {
					seen[o.token] = true
					tokens = append(tokens, o.token)
				}
			}
			if _, err := tx.WebhookDelivery.Update().Where(webhookdelivery.IDIn(ids...), webhookdelivery.ClaimIn(tokens...),
				webhookdelivery.Status(Sending)).SetStatus(Delivered).SetHTTPStatus(code).SetAt(now).ClearClaimedUntil().Save(ctx); err != nil {
				return err
			}
		}
		return nil
	})
}
