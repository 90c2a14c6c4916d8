package resolvers_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"storefront/internal/app"
	"storefront/internal/platform/auth"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/gqltest"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/webhooks"
)

// The webhooks' contract over GraphQL (issue 38, item 5): a url over 2048
// bytes or on an address that is not globally reachable is INVALID_INPUT
// (it was INTERNAL when long, also for an unknown id), an unknown id is
// NOT_FOUND, and rotateWebhookSecret is admin only, returns a new secret
// and when the old one stops signing.
func TestWebhooksOverGraphQL(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		signer, err := auth.NewSigner("hooks-test-secret-0123456789abcdef")
		if err != nil {
			t.Fatal(err)
		}
		sf := app.New(db, nil, signer, app.DefaultConfig())
		t.Cleanup(sf.Close)
		h := sf.Handler()
		admin, _ := signer.Issue("alice", auth.Admin, time.Hour)
		customer, _ := signer.Issue("bob", auth.Customer, time.Hour)
		do := func(token, query string, vars map[string]any) gqltest.Answer {
			t.Helper()
			return gqltest.Do(t, h, token, query, vars)
		}
		const (
			create = `mutation($u: String!) { createWebhook(input: {url: $u, events: ["OrderPaid"]}) { webhook { id previousSecretExpiresAt } secret } }`
			update = `mutation($id: ID!, $u: String) { updateWebhook(id: $id, input: {url: $u}) { id } }`
			rotate = `mutation($id: ID!, $g: Int) { rotateWebhookSecret(id: $id, graceSeconds: $g) { webhook { id url previousSecretExpiresAt } secret } }`
			list   = `{ webhooks { id previousSecretExpiresAt } }`
		)
		public := "https://93.184.215.14/hook"
		long := public + "/" + strings.Repeat("a", webhooks.MaxURLLen-len(public))
		a := do(admin, create, map[string]any{"u": public})
		var created struct {
			Webhook struct {
				ID                      string
				PreviousSecretExpiresAt *time.Time
			}
			Secret string
		}
		if a.Code() != "" || json.Unmarshal(a.Data["createWebhook"], &created) != nil || !strings.HasPrefix(created.Secret, "whsec_") ||
			created.Webhook.PreviousSecretExpiresAt != nil {
			t.Fatalf("createWebhook: %+v", a)
		}
		id := created.Webhook.ID

		for _, tc := range []struct {
			name, token, query string
			vars               map[string]any
			want               string
		}{
			{"createWebhook, url of 2049 bytes", admin, create, map[string]any{"u": long}, "INVALID_INPUT"},
			{"createWebhook, url in 198.18.0.0/15", admin, create, map[string]any{"u": "https://198.18.0.1/hook"}, "INVALID_INPUT"},
			{"createWebhook, url NAT64 of 10.0.0.1", admin, create, map[string]any{"u": "https://[64:ff9b::a00:1]/hook"}, "INVALID_INPUT"},
			{"createWebhook, url IPv4-mapped 100.64.0.1", admin, create, map[string]any{"u": "http://[::ffff:100.64.0.1]/"}, "INVALID_INPUT"},
			{"updateWebhook, url of 2049 bytes", admin, update, map[string]any{"id": id, "u": long}, "INVALID_INPUT"},
			{"updateWebhook of an unknown id, url of 2049 bytes", admin, update, map[string]any{"id": "99999", "u": long}, "INVALID_INPUT"},
			{"updateWebhook, url in 203.0.113.0/24", admin, update, map[string]any{"id": id, "u": "https://203.0.113.9/"}, "INVALID_INPUT"},
			{"updateWebhook of an unknown id", admin, update, map[string]any{"id": "99999", "u": public}, "NOT_FOUND"},
			{"deleteWebhook of an unknown id", admin, `mutation { deleteWebhook(id: "99999") }`, nil, "NOT_FOUND"},
			{"webhookDeliveries of an unknown id", admin, `{ webhookDeliveries(webhookId: "99999") { edges { cursor } } }`, nil, "NOT_FOUND"},
			{"rotateWebhookSecret of an unknown id", admin, rotate, map[string]any{"id": "99999"}, "NOT_FOUND"},
			{"rotateWebhookSecret by a customer", customer, rotate, map[string]any{"id": id}, "FORBIDDEN"},
			{"rotateWebhookSecret without a token", "", rotate, map[string]any{"id": id}, "UNAUTHENTICATED"},
			{"rotateWebhookSecret, graceSeconds -1", admin, rotate, map[string]any{"id": id, "g": -1}, "INVALID_INPUT"},
			{"rotateWebhookSecret, graceSeconds a week and a second", admin, rotate, map[string]any{"id": id, "g": 604801}, "INVALID_INPUT"},
			// Times 10⁹ (nanoseconds) it overflows int64 into one hour.
			{"rotateWebhookSecret, graceSeconds 2⁵⁵+3600", admin, rotate, map[string]any{"id": id, "g": int64(1)<<55 + 3600}, "INVALID_INPUT"},
		} {
			if got := do(tc.token, tc.query, tc.vars).Code(); got != tc.want {
				t.Errorf("%s: code %q, want %q", tc.name, got, tc.want)
			}
		}
		// None of the refusals changed the webhook.
		if w, err := db.Client.Webhook.Get(t.Context(), mustID(t, id)); err != nil || w.URL != public || w.Secret != created.Secret || w.PreviousSecret != "" {
			t.Fatalf("after the refusals: %+v, %v", w, err)
		}

		type rotated struct {
			Webhook struct {
				ID, URL                 string
				PreviousSecretExpiresAt *time.Time
			}
			Secret string
		}
		rot := func(grace any) rotated {
			t.Helper()
			a := do(admin, rotate, map[string]any{"id": id, "g": grace})
			var r rotated
			if a.Code() != "" || json.Unmarshal(a.Data["rotateWebhookSecret"], &r) != nil {
				t.Fatalf("rotateWebhookSecret(graceSeconds %v): %+v", grace, a)
			}
			if r.Webhook.ID != id || r.Webhook.URL != public || !strings.HasPrefix(r.Secret, "whsec_") {
				t.Errorf("rotateWebhookSecret(graceSeconds %v) = %+v", grace, r)
			}
			if w, err := db.Client.Webhook.Get(t.Context(), mustID(t, id)); err != nil || w.Secret != r.Secret {
				t.Errorf("rotateWebhookSecret(graceSeconds %v): the secret answered is not the secret kept (%v)", grace, err)
			}
			return r
		}
		expiresNear := func(name string, got *time.Time, from, to time.Time) {
			t.Helper()
			if got == nil || got.Before(from.Add(-time.Second)) || got.After(to.Add(time.Second)) {
				t.Errorf("%s: previousSecretExpiresAt = %v, want between %v and %v", name, got, from, to)
			}
		}
		from := time.Now()
		r1 := rot(nil) // the default grace, a day
		expiresNear("the default grace", r1.Webhook.PreviousSecretExpiresAt, from.Add(24*time.Hour), time.Now().Add(24*time.Hour))
		if r1.Secret == created.Secret {
			t.Error("rotateWebhookSecret answered the old secret")
		}
		if w, _ := db.Client.Webhook.Get(t.Context(), mustID(t, id)); w.PreviousSecret != created.Secret {
			t.Error("the secret a rotation replaced is not kept to sign beside the new one")
		}
		var l struct {
			Webhooks []struct {
				ID                      string
				PreviousSecretExpiresAt *time.Time
			}
		}
		if a := do(admin, list, nil); a.Code() != "" || json.Unmarshal(a.Data["webhooks"], &l.Webhooks) != nil || len(l.Webhooks) != 1 {
			t.Fatalf("webhooks: %+v", a)
		}
		expiresNear("webhooks during the grace", l.Webhooks[0].PreviousSecretExpiresAt, from.Add(24*time.Hour), time.Now().Add(24*time.Hour))

		from = time.Now()
		r2 := rot(3600)
		expiresNear("graceSeconds 3600", r2.Webhook.PreviousSecretExpiresAt, from.Add(time.Hour), time.Now().Add(time.Hour))
		if w, _ := db.Client.Webhook.Get(t.Context(), mustID(t, id)); w.PreviousSecret != r1.Secret {
			t.Error("a second rotation does not keep the secret the first gave")
		}
		if r3 := rot(0); r3.Webhook.PreviousSecretExpiresAt != nil {
			t.Errorf("graceSeconds 0: previousSecretExpiresAt = %v, want null (the old secret stops at once)", r3.Webhook.PreviousSecretExpiresAt)
		}
	})
}
