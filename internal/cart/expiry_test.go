package cart

import (
	"context"
	"testing"
	"time"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/errs"
)

// A cart untouched for the TTL is gone: null to read, NOT_FOUND to change,
// no longer the customer's open cart; a change before then starts the TTL
// again; Purge deletes expired carts and their lines in batches and keeps
// the rest.
func TestExpiry(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		f.svc.cfg.PurgeBatch = 2 // three expired carts: two batches
		ttl := f.svc.cfg.TTL
		id := f.tshirt(t, "黑色,L")
		var old []string
		for _, who := range []string{"", "", "alice"} {
			old = append(old, f.ok(f.svc.Create(ctx, who, []LineInput{item(id, 1)})).ID)
		}
		kept := f.ok(f.svc.Create(ctx, "", []LineInput{item(id, 1)}))
		f.advance(ttl - time.Minute)
		f.ok(f.svc.AddLines(ctx, "", kept.ID, []LineInput{item(id, 1)})) // touched: lives another TTL
		if c := f.read(t, "", old[0]); c == nil || !c.ExpiresAt.After(f.now()) {
			t.Fatal("a cart expired before its TTL")
		}
		f.advance(2 * time.Minute)
		for _, tok := range old {
			who := ""
			if tok == old[2] {
				who = "alice"
			}
			if c := f.read(t, who, tok); c != nil {
				t.Fatalf("cart %s read after its TTL", tok)
			}
			_, err := f.svc.AddLines(ctx, who, tok, []LineInput{item(id, 1)})
			wantErr(t, err, errs.NotFound)
		}
		// alice's expired cart is not hers any more: a new one is made.
		if c := f.ok(f.svc.Create(ctx, "alice", nil)); c.ID == old[2] {
			t.Fatal("cartCreate answered alice's expired cart")
		}
		n, err := f.svc.Purge(ctx)
		if err != nil || n != 3 {
			t.Fatalf("Purge = %d, %v; want 3", n, err)
		}
		if c := f.read(t, "", kept.ID); c == nil || len(c.Lines) != 1 {
			t.Fatal("the purge took a live cart")
		}
		carts, _ := f.db.Client.Cart.Query().Count(ctx)
		lines, _ := f.db.Client.CartLine.Query().Count(ctx)
		// alice's new cart has no line, so it is not stored (issue 25).
		if carts != 1 || lines != 1 {
			t.Fatalf("after the purge: %d carts, %d lines; want 1 and 1", carts, lines)
		}
		if n, err := f.svc.Purge(ctx); err != nil || n != 0 {
			t.Fatalf("second Purge = %d, %v", n, err)
		}
	})
}

func (f *fixture) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.clock }
