package webhooks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"storefront/ent/webhookdelivery"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// A webhook whose name resolves to a refused address when a delivery
// connects (it resolved to a public one at registration: DNS rebinding) is
// refused by the dialer with the rule of registration: the attempt fails
// without a request reaching the receiver on loopback.
func TestDialRefusesWhatRegistrationWould(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		var got atomic.Int64
		rcv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { got.Add(1) }))
		t.Cleanup(rcv.Close)
		s := New(db, Config{EventTypes: eventTypes, Retry: []time.Duration{time.Hour}, Interval: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Written as registration would have, had localhost resolved to a
		// public address then.
		url := strings.Replace(rcv.URL, "127.0.0.1", "localhost", 1)
		w, err := db.Client.Webhook.Create().SetURL(url).SetEvents(orderPaid).SetSecret(newSecret()).
			SetCreatedAt(time.Now()).Save(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sink()(ctx, evs(1)); err != nil {
			t.Fatal(err)
		}
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		var ds []*Delivery
		waitUntil(t, "the first attempt ended", func() bool {
			ds, _, _, err = s.Deliveries(ctx, w.ID, 10, "")
			return err == nil && len(ds) >= 1 && (ds[len(ds)-1].Status == Failed || ds[len(ds)-1].Status == Delivered)
		})
		cancel()
		<-done
		if d := ds[len(ds)-1]; d.Attempt != 1 || d.Status != Failed || !strings.Contains(d.Error, "refusing to connect") ||
			!strings.Contains(d.Error, "127.0.0.0/8") && !strings.Contains(d.Error, "loopback") {
			t.Errorf("first attempt: %+v; want FAILED, refused by the dialer as loopback", d)
		}
		if n := got.Load(); n != 0 {
			t.Errorf("the receiver on loopback got %d requests", n)
		}
		if n, _ := db.Client.WebhookDelivery.Query().Where(webhookdelivery.WebhookID(w.ID), webhookdelivery.Status(Delivered)).Count(ctx); n != 0 {
			t.Errorf("%d deliveries DELIVERED", n)
		}
	})
}
