package webhooks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/outbox"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// clock is a Service's now, set by the test: every time the service reads
// (leases, dues, the grace of a rotated secret) stands still until moved.
type clock struct{ t atomic.Int64 }

func newClock(t time.Time) *clock { c := &clock{}; c.set(t); return c }
func (c *clock) set(t time.Time)  { c.t.Store(t.UnixNano()) }
func (c *clock) now() time.Time   { return time.Unix(0, c.t.Load()) }

// signed is one request a receiver got: what it needs to verify it.
type signed struct {
	id, sig string
	ts      int64
	body    []byte
}

// signedReceiver keeps every request, and answers 200.
type signedReceiver struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string]signed // by webhook-id
}

func newSignedReceiver(t *testing.T) *signedReceiver {
	r := &signedReceiver{got: map[string]signed{}}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		ts, _ := strconv.ParseInt(req.Header.Get("webhook-timestamp"), 10, 64)
		s := signed{id: req.Header.Get("webhook-id"), sig: req.Header.Get("webhook-signature"), ts: ts, body: body}
		r.mu.Lock()
		r.got[s.id] = s
		r.mu.Unlock()
	}))
	t.Cleanup(r.Close)
	return r
}

// A rotation's old secret signs beside the new one for its grace, and not
// after: during it a receiver that has either secret accepts the delivery
// (webhook-signature "v1,<new> v1,<old>"), after it only the new secret
// verifies and the header has one signature. Sent by the real sender,
// whose clock the test moves: no sleep.
func TestRotatedSecretSignsBesideTheNewForItsGrace(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		rcv := newSignedReceiver(t)
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true, Interval: 20 * time.Millisecond})
		// Whole seconds: a column without fractions keeps the grace's end exact.
		base := time.Now().Truncate(time.Second)
		c := newClock(base)
		s.now = c.now
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		w, first, err := s.Create(ctx, rcv.URL, []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		n := 0
		deliver := func() signed {
			t.Helper()
			n++
			e := outbox.Event{ID: fmt.Sprintf("00000000-0000-4000-8000-%012d", n), Type: orderPaid,
				Payload: fmt.Sprintf(`{"orderSn":"sn-%d"}`, n), At: time.Now()}
			if _, err := s.Sink()(ctx, []outbox.Event{e}); err != nil {
				t.Fatal(err)
			}
			waitUntil(t, "event "+e.ID+" delivered and recorded", func() bool {
				n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.EventID(e.ID), webhookdelivery.Status(Delivered)).Count(ctx)
				return n == 1
			})
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			return rcv.got[e.ID]
		}
		check := func(when string, r signed, want int, accept, refuse []string) {
			t.Helper()
			if got := len(strings.Fields(r.sig)); got != want {
				t.Errorf("%s: webhook-signature %q has %d signatures, want %d", when, r.sig, got, want)
			}
			for _, k := range accept {
				if !Verify(k, r.id, r.ts, r.body, r.sig) {
					t.Errorf("%s: a receiver with secret %.12s… refuses %q", when, k, r.sig)
				}
			}
			for _, k := range refuse {
				if Verify(k, r.id, r.ts, r.body, r.sig) {
					t.Errorf("%s: secret %.12s… still verifies %q", when, k, r.sig)
				}
			}
		}
		expiry := func(when string, want *time.Time) {
			t.Helper()
			ws, err := s.List(ctx)
			if err != nil || len(ws) != 1 {
				t.Fatalf("List = %v, %v", ws, err)
			}
			if got := ws[0].PreviousSecretExpiresAt; (got == nil) != (want == nil) || got != nil && !got.Equal(*want) {
				t.Errorf("%s: previousSecretExpiresAt = %v, want %v", when, got, want)
			}
		}

		check("before any rotation", deliver(), 1, []string{first}, nil)
		expiry("before any rotation", nil)

		rw, second, err := s.RotateSecret(ctx, w.ID, DefaultGrace)
		if err != nil {
			t.Fatal(err)
		}
		if second == first || !strings.HasPrefix(second, secretPrefix) {
			t.Fatalf("RotateSecret gave %.12s…, after %.12s…", second, first)
		}
		end := base.Add(DefaultGrace)
		if rw.PreviousSecretExpiresAt == nil || !rw.PreviousSecretExpiresAt.Equal(end) {
			t.Errorf("RotateSecret: previousSecretExpiresAt = %v, want %v", rw.PreviousSecretExpiresAt, end)
		}
		check("just after the rotation", deliver(), 2, []string{first, second}, nil)
		expiry("just after the rotation", &end)
		c.set(end.Add(-time.Second))
		check("the grace's last second", deliver(), 2, []string{first, second}, nil)
		c.set(end)
		check("at the grace's end", deliver(), 1, []string{second}, []string{first})
		expiry("at the grace's end", nil)

		// Rotating again with no grace: only the newest signs, at once.
		_, third, err := s.RotateSecret(ctx, w.ID, 0)
		if err != nil {
			t.Fatal(err)
		}
		check("after a rotation without grace", deliver(), 1, []string{third}, []string{first, second})
		expiry("after a rotation without grace", nil)
	})
}

// RotateSecret's refusals: an unknown webhook, a grace out of range.
func TestRotateSecretRefuses(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true})
		ctx := context.Background()
		w, secret, err := s.Create(ctx, "http://127.0.0.1:9/hook", []string{orderPaid}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := s.RotateSecret(ctx, w.ID+1, DefaultGrace); !errors.Is(err, errs.NotFound) {
			t.Errorf("RotateSecret(unknown id) = %v, want NOT_FOUND", err)
		}
		for _, g := range []time.Duration{-time.Second, MaxGrace + time.Second} {
			if _, _, err := s.RotateSecret(ctx, w.ID, g); !errors.Is(err, errs.InvalidInput) {
				t.Errorf("RotateSecret(grace %v) = %v, want INVALID_INPUT", g, err)
			}
		}
		if got, err := db.Client.Webhook.Get(ctx, w.ID); err != nil || got.Secret != secret || got.PreviousSecret != "" {
			t.Errorf("after refused rotations the webhook has another secret (%v)", err)
		}
	})
}

// Rotations at once: each succeeds, and they run one after another, so the
// secret kept for the grace is the one the last rotation replaced — a
// secret another of them handed out, never the webhook's first (two that
// both read the first would keep it, and the secret the earlier of them
// handed out would never have signed anything).
func TestConcurrentRotationsKeepTheSecretTheyReplaced(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true})
		ctx := context.Background()
		for round := range 5 {
			w, first, err := s.Create(ctx, fmt.Sprintf("http://127.0.0.1:9/hook-%d", round), []string{orderPaid}, "")
			if err != nil {
				t.Fatal(err)
			}
			const n = 8
			var (
				wg     sync.WaitGroup
				mu     sync.Mutex
				handed = map[string]bool{}
				start  = make(chan struct{})
			)
			for range n {
				wg.Go(func() {
					<-start
					_, sec, err := s.RotateSecret(ctx, w.ID, time.Hour)
					if err != nil {
						t.Errorf("round %d: RotateSecret = %v", round, err)
						return
					}
					mu.Lock()
					handed[sec] = true
					mu.Unlock()
				})
			}
			close(start)
			wg.Wait()
			if len(handed) != n {
				t.Fatalf("round %d: %d of %d rotations succeeded", round, len(handed), n)
			}
			got, err := db.Client.Webhook.Get(ctx, w.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !handed[got.Secret] {
				t.Fatalf("round %d: the secret kept is none of those the rotations handed out", round)
			}
			if got.PreviousSecret == first || !handed[got.PreviousSecret] {
				t.Errorf("round %d: the previous secret kept (%.12s…) is not one a rotation handed out (first: %t)", round, got.PreviousSecret, got.PreviousSecret == first)
			}
		}
	})
}

// A database made before rotation (webhook without previous_secret and
// previous_secret_until) keeps its webhooks through Migrate: they sign
// with their one secret, and rotate.
func TestMigrateAddsThePreviousSecret(t *testing.T) {
	ctx := context.Background()
	for _, b := range testdb.Backends {
		t.Run(string(b), func(t *testing.T) {
			db, err := store.Open(ctx, testdb.Spec(t, b))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				"ALTER TABLE webhook DROP COLUMN previous_secret",
				"ALTER TABLE webhook DROP COLUMN previous_secret_until",
				"INSERT INTO webhook (id, url, events, description, secret, active, created_at) " +
					"VALUES (7, 'http://127.0.0.1:9/hook', 'OrderPaid', '', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', true, '2026-01-01 00:00:00')",
			} {
				if _, err := db.SQL.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("migrating the old schema: %v", err)
			}
			s := New(db, Config{EventTypes: eventTypes, AllowPrivate: true})
			w, err := db.Client.Webhook.Get(ctx, 7)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := s.sign(w, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, []byte(`{"test": 2432232314}`))
			if err != nil || sig != "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=" {
				t.Errorf("an old webhook signs %q, %v; want the one signature of its secret", sig, err)
			}
			if ws, err := s.List(ctx); err != nil || len(ws) != 1 || ws[0].PreviousSecretExpiresAt != nil {
				t.Errorf("List = %+v, %v", ws, err)
			}
			if _, _, err := s.RotateSecret(ctx, 7, time.Hour); err != nil {
				t.Errorf("rotating an old webhook: %v", err)
			}
		})
	}
}
