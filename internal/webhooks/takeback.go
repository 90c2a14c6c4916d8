package webhooks

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/store"
)

// TakeBack puts back, as PENDING and due at once, the attempts that this
// instance (Config.Instance) claimed before it started and that are still
// SENDING under a lease that holds: the process that claimed them is gone
// (killed, crashed), and without this they waited out their lease (30 s
// and more, sender.go's leaseEnd) before any sender would try them again.
// Serve calls it once at start, before its sender runs. It returns how
// many attempts it put back.
//
// An attempt the dead process had sent and not yet recorded goes again
// (at least once, as after a lapsed lease). Two processes running with the
// same instance id would put back each other's attempts: --instance-id
// must be unique among running instances.
func (s *Service) TakeBack(ctx context.Context) (int, error) {
	if s.cfg.Instance == "" {
		return 0, nil
	}
	// By webhook, status and claimer: the index (webhook_id, status,
	// due_at) finds the SENDING rows of each webhook without reading the
	// delivered ones.
	hooks, err := s.db.Client.Webhook.Query().IDs(ctx)
	if err != nil || len(hooks) == 0 {
		return 0, store.Classify(err)
	}
	n, err := lease.TakeBack(ctx, s.cfg.Instance, s.now(),
		func(ctx context.Context, held func(*sql.Selector), clear func(*sql.UpdateBuilder)) (int, error) {
			return s.db.Client.WebhookDelivery.Update().Where(webhookdelivery.WebhookIDIn(hooks...), webhookdelivery.Status(Sending), held).
				SetStatus(Pending).Modify(clear).Save(ctx)
		})
	if err != nil {
		return 0, fmt.Errorf("taking back webhook deliveries: %w", err)
	}
	return n, nil
}
