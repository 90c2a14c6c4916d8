// Package webhooks delivers the outbox's events to HTTP endpoints that
// admins register: each matching event is POSTed as its CloudEvent, signed
// as the Standard Webhooks specification says, and retried on a schedule.
// It owns the tables webhook and webhook_delivery, and knows no domain: the
// event types it offers come in its Config.
package webhooks

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"storefront/ent"
	"storefront/ent/webhook"
	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/settings"
	"storefront/internal/platform/store"
	"storefront/internal/platform/tracing"
	"storefront/internal/vocab/errs"
)

// Config is the delivery policy (serve's --webhook-* flags).
type Config struct {
	// Retry is the wait before each retry: attempt n+1 is due Retry[n-1]
	// after attempt n failed; after the last, the delivery is failed.
	Retry []time.Duration
	// Timeout bounds one attempt (connect, send, answer).
	Timeout time.Duration
	// AllowPrivate accepts loopback, private and link-local addresses.
	AllowPrivate bool
	// Source is the CloudEvents source (events.DefaultSource).
	Source string
	// PerWebhook is how many attempts to one webhook one instance has in
	// flight at most; a slow endpoint holds only its own.
	PerWebhook int
	// Interval is how often due attempts are looked for (a dispatch also
	// wakes the sender).
	Interval time.Duration
	// Instance is this process's id (serve's --instance-id): the attempts
	// it claims record it, and TakeBack puts back those of its previous
	// life at start.
	Instance string
	// EventTypes are the types a webhook may subscribe to: the domains'
	// (internal/app passes checkout's).
	EventTypes []string
	// Tracing gives each attempt a client span in its event's trace and
	// the request a traceparent header (nil: off).
	Tracing *tracing.Tracing
}

// DefaultRetry is --webhook-retry's default: 5s,5m,30m,2h,5h,10h,10h.
var DefaultRetry = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// DefaultConfig is serve's defaults.
func DefaultConfig() Config {
	return Config{Retry: slices.Clone(DefaultRetry), Timeout: 10 * time.Second, PerWebhook: 16, Interval: time.Second}
}

// MaxWebhooks is how many webhooks may be registered: every event is
// queued for each subscribed one, and the webhooks query lists them all.
const MaxWebhooks = 100

// Service registers webhooks and delivers to them.
type Service struct {
	db   *store.DB
	cfg  Config
	wake chan struct{}
	now  func() time.Time
	// inflight counts this instance's attempts in flight per webhook
	// (sender.go).
	inflight  *inflight
	delivered chan outcome // to the recorder (recorder.go), while Run runs
	mu        sync.Mutex
	run       *runner // the running sender (nil: none)
	// startedQueued counts the rows whose attempts the Sink started as it
	// queued them (the tests tell the two ways a row starts apart by it).
	startedQueued atomic.Int64
}

// New returns the service; Run starts its sender.
func New(db *store.DB, cfg Config) *Service {
	d := DefaultConfig()
	settings.Positive(&cfg.Timeout, d.Timeout)
	settings.Positive(&cfg.PerWebhook, d.PerWebhook)
	settings.Positive(&cfg.Interval, d.Interval)
	if cfg.Retry == nil {
		cfg.Retry = d.Retry
	}
	if cfg.Source == "" {
		cfg.Source = "/storefront"
	}
	return &Service{db: db, cfg: cfg, wake: make(chan struct{}, 1), now: time.Now, inflight: newInflight()}
}

// Webhook is a registered endpoint.
type Webhook struct {
	ID          int64
	URL         string
	Events      []string
	Description string
	Active      bool
	CreatedAt   time.Time
	// PreviousSecretExpiresAt is when the secret a rotation replaced stops
	// signing, while it still does (nil otherwise).
	PreviousSecretExpiresAt *time.Time
}

// webhookOf is w as seen at now.
func webhookOf(w *ent.Webhook, now time.Time) *Webhook {
	out := &Webhook{ID: w.ID, URL: w.URL, Events: strings.Split(w.Events, ","), Description: w.Description, Active: w.Active, CreatedAt: w.CreatedAt}
	if previousSigns(w, now) {
		out.PreviousSecretExpiresAt = w.PreviousSecretUntil
	}
	return out
}

// checkEvents refuses an empty list and types not in Config.EventTypes; it
// returns the list without repeats, as stored.
func (s *Service) checkEvents(evs []string) (string, error) {
	known := s.cfg.EventTypes
	if len(evs) == 0 {
		return "", fmt.Errorf("%w: a webhook needs at least one event type (%s)", errs.InvalidInput, strings.Join(known, ", "))
	}
	var out []string
	for _, e := range evs {
		if !slices.Contains(known, e) {
			return "", fmt.Errorf("%w: unknown event type %q (known: %s)", errs.InvalidInput, e, strings.Join(known, ", "))
		}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return strings.Join(out, ","), nil
}

// Create registers a webhook and returns it with its secret (shown once).
func (s *Service) Create(ctx context.Context, url string, events []string, description string) (*Webhook, string, error) {
	if err := checkURL(ctx, url, s.cfg.AllowPrivate); err != nil {
		return nil, "", err
	}
	evs, err := s.checkEvents(events)
	if err != nil {
		return nil, "", err
	}
	if len(description) > 512 {
		return nil, "", fmt.Errorf("%w: description longer than 512 bytes", errs.InvalidInput)
	}
	if n, err := s.db.Client.Webhook.Query().Count(ctx); err != nil {
		return nil, "", store.Classify(err)
	} else if n >= MaxWebhooks {
		return nil, "", fmt.Errorf("%w: at most %d webhooks; delete one first", errs.InvalidInput, MaxWebhooks)
	}
	secret := newSecret()
	w, err := s.db.Client.Webhook.Create().SetURL(url).SetEvents(evs).SetDescription(description).
		SetSecret(secret).SetCreatedAt(s.now()).Save(ctx)
	if err != nil {
		return nil, "", store.Classify(fmt.Errorf("creating webhook: %w", err))
	}
	return webhookOf(w, s.now()), secret, nil
}

// List returns every webhook, oldest first.
func (s *Service) List(ctx context.Context) ([]*Webhook, error) {
	ws, err := s.db.Client.Webhook.Query().Order(webhook.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("listing webhooks: %w", err))
	}
	out := make([]*Webhook, len(ws))
	now := s.now()
	for i, w := range ws {
		out[i] = webhookOf(w, now)
	}
	return out, nil
}

// Update is a change to a webhook: nil fields stay.
type Update struct {
	URL    *string
	Events []string // nil: unchanged
	Active *bool
}

// Update changes webhook id.
func (s *Service) Update(ctx context.Context, id int64, u Update) (*Webhook, error) {
	up := s.db.Client.Webhook.UpdateOneID(id)
	if u.URL != nil {
		if err := checkURL(ctx, *u.URL, s.cfg.AllowPrivate); err != nil {
			return nil, err
		}
		up.SetURL(*u.URL)
	}
	if u.Events != nil {
		evs, err := s.checkEvents(u.Events)
		if err != nil {
			return nil, err
		}
		up.SetEvents(evs)
	}
	if u.Active != nil {
		up.SetActive(*u.Active)
	}
	w, err := up.Save(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: webhook %d", errs.NotFound, id)
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("updating webhook %d: %w", id, err))
	}
	return webhookOf(w, s.now()), nil
}

// DefaultGrace is how long the secret rotateWebhookSecret replaces goes on
// signing beside the new one when the admin does not say: a day, for a
// receiver's deployment to take the new secret at its own pace.
const DefaultGrace = 24 * time.Hour

// MaxGrace is the longest grace a rotation may give the old secret: an old
// secret is a secret more that may leak.
const MaxGrace = 7 * 24 * time.Hour

// RotateSecret gives webhook id a new secret, returned once. The secret it
// replaces goes on signing beside it for grace (sign.go); a rotation
// during another's grace ends the older secret's at once, so that at most
// two secrets sign. Attempts a sender claimed before the rotation are
// signed as they were when claimed, until the claim's lease ends.
func (s *Service) RotateSecret(ctx context.Context, id int64, grace time.Duration) (*Webhook, string, error) {
	if grace < 0 || grace > MaxGrace {
		return nil, "", fmt.Errorf("%w: grace %v: want 0 to %v", errs.InvalidInput, grace, MaxGrace)
	}
	secret := newSecret()
	var w *ent.Webhook
	now := s.now()
	// The row is read locked (an admin path, rare): of two rotations at
	// once, the second reads the first's secret, so that the secret kept
	// for the grace is the one receivers were last given, never one a
	// concurrent rotation handed out and then lost.
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		old, err := tx.Webhook.Query().Where(webhook.ID(id)).Modify(store.UpdateLock).Only(ctx)
		if ent.IsNotFound(err) {
			return fmt.Errorf("%w: webhook %d", errs.NotFound, id)
		} else if err != nil {
			return fmt.Errorf("reading webhook %d: %w", id, err)
		}
		up := tx.Webhook.UpdateOne(old).SetSecret(secret)
		if grace > 0 {
			up.SetPreviousSecret(old.Secret).SetPreviousSecretUntil(now.Add(grace))
		} else {
			up.SetPreviousSecret("").ClearPreviousSecretUntil()
		}
		w, err = up.Save(ctx)
		if err != nil {
			return fmt.Errorf("rotating webhook %d's secret: %w", id, err)
		}
		return nil
	})
	if err != nil {
		return nil, "", store.Classify(err)
	}
	return webhookOf(w, now), secret, nil
}

// Delete removes webhook id and its deliveries (those in flight end, and
// their outcome is dropped).
func (s *Service) Delete(ctx context.Context, id int64) error {
	return store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		if err := tx.Webhook.DeleteOneID(id).Exec(ctx); ent.IsNotFound(err) {
			return fmt.Errorf("%w: webhook %d", errs.NotFound, id)
		} else if err != nil {
			return fmt.Errorf("deleting webhook %d: %w", id, err)
		}
		if _, err := tx.WebhookDelivery.Delete().Where(webhookdelivery.WebhookID(id)).Exec(ctx); err != nil {
			return fmt.Errorf("deleting webhook %d's deliveries: %w", id, err)
		}
		return nil
	})
}

// Delivery is one attempt to deliver one event.
type Delivery struct {
	ID            int64
	EventID       string
	EventType     string
	Attempt       int
	Status        string // PENDING, SENDING, DELIVERED, FAILED
	HTTPStatus    *int
	Error         string
	At            time.Time // when it ended, or (not yet sent) when it is due
	NextAttemptAt *time.Time
}

// Statuses of a delivery attempt.
const (
	Pending   = "PENDING"
	Sending   = "SENDING"
	Delivered = "DELIVERED"
	Failed    = "FAILED"
)
