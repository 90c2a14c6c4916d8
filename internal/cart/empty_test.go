package cart

import (
	"context"
	"errors"
	"sync"
	"testing"

	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
)

func (f *fixture) rows(t *testing.T) (carts, lines int) {
	t.Helper()
	ctx := context.Background()
	carts, err := f.db.Client.Cart.Query().Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lines, err = f.db.Client.CartLine.Query().Count(ctx); err != nil {
		t.Fatal(err)
	}
	return carts, lines
}

// A cart made without lines stores nothing (issue 25: an anonymous flood of
// empty carts lived for the TTL) but its id is handed out: it reads as an
// empty OPEN cart, for its owner only, until the TTL; its first line stores
// it under that id, once however many first lines race. An id the server
// did not make, or one altered, reads as null.
func TestEmptyCartNotStored(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := setup(t, db)
		id := f.tshirt(t, "黑色,L")
		anon := f.ok(f.svc.Create(ctx, "", nil))
		mine := f.ok(f.svc.Create(ctx, "alice", nil))
		if c, l := f.rows(t); c != 0 || l != 0 {
			t.Fatalf("two empty carts stored %d carts, %d lines; want none", c, l)
		}
		if anon.ID == mine.ID || !wellFormed(anon.ID) || anon.Status != enums.CartOpen || len(anon.Lines) != 0 {
			t.Fatalf("empty carts %+v and %+v", anon, mine)
		}
		for _, tc := range []struct {
			who, token string
			visible    bool
		}{
			{"", anon.ID, true}, {"bob", anon.ID, true}, {"alice", mine.ID, true},
			{"", mine.ID, false}, {"bob", mine.ID, false},
			{"", "0123456789abcdef0123456789abcdef", false},
			{"", anon.ID[:31] + string("0123456789abcdef"[(int(anon.ID[31])+1)%16]), false}, // its MAC altered
		} {
			c := f.read(t, tc.who, tc.token)
			if (c != nil) != tc.visible {
				t.Errorf("%q reading %s: %+v, want visible %v", tc.who, tc.token, c, tc.visible)
			}
			if c != nil && (c.ID != tc.token || c.Status != enums.CartOpen || len(c.Lines) != 0 || !c.ExpiresAt.After(f.now())) {
				t.Errorf("%q reading %s: %+v, want an empty OPEN cart of that id", tc.who, tc.token, c)
			}
		}
		if _, err := f.svc.AddLines(ctx, "bob", mine.ID, []LineInput{item(id, 1)}); !isNotFound(err) {
			t.Errorf("bob adding to alice's empty cart: %v, want NOT_FOUND", err)
		}
		_, err := f.svc.Checkout(ctx, "alice", anon.ID, "")
		wantErr(t, err, errs.Forbidden)

		// 8 first lines at once: one cart, under the id handed out, with all 8.
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if c, err := f.svc.AddLines(ctx, "", anon.ID, []LineInput{item(id, 1)}); err != nil || c.ID != anon.ID {
					t.Errorf("a first line: %+v, %v; want cart %s", c, err, anon.ID)
				}
			}()
		}
		wg.Wait()
		if c, l := f.rows(t); c != 1 || l != 1 {
			t.Fatalf("after 8 first lines: %d carts, %d lines; want 1 and 1", c, l)
		}
		if c := f.read(t, "", anon.ID); c == nil || quantities(c)[id] != 8 {
			t.Fatalf("the stored cart: %+v, want 8 of SKU %d", c, id)
		}
		c := f.ok(f.svc.AddLines(ctx, "alice", mine.ID, []LineInput{item(id, 2)}))
		if c.ID != mine.ID || c.Owner() != "alice" || f.read(t, "", mine.ID) != nil {
			t.Fatalf("alice's first line: %+v, want her cart %s, hidden from others", c, mine.ID)
		}
		if again := f.ok(f.svc.Create(ctx, "alice", nil)); again.ID != mine.ID {
			t.Errorf("alice's next cartCreate: %s, want her open cart %s", again.ID, mine.ID)
		}

		// Attaching an empty cart keeps its id and takes the customer's other
		// cart's lines, as attaching any cart does.
		empty := f.ok(f.svc.Create(ctx, "", nil))
		c = f.ok(f.svc.Attach(ctx, "alice", empty.ID))
		if c.ID != empty.ID || quantities(c)[id] != 2 || c.Owner() != "alice" {
			t.Fatalf("attaching an empty cart: %+v, want %s with alice's 2", c, empty.ID)
		}

		// An empty cart's id expires with the TTL, as a stored cart does.
		late := f.ok(f.svc.Create(ctx, "", nil))
		f.advance(f.svc.cfg.TTL)
		if c := f.read(t, "", late.ID); c != nil {
			t.Errorf("an empty cart read after the TTL: %+v", c)
		}
		if _, err := f.svc.AddLines(ctx, "", late.ID, []LineInput{item(id, 1)}); !isNotFound(err) {
			t.Errorf("adding to an expired empty cart: %v, want NOT_FOUND", err)
		}
	})
}

func isNotFound(err error) bool { return errors.Is(err, errs.NotFound) }
