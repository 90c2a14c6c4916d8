package checkout

import (
	"context"
	"errors"
	"testing"
	"time"

	"storefront/ent/idempotency"
	"storefront/internal/platform/store"
)

func TestIdempotencyKey(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL, blackS := f.skuID(t, "黑色,L"), f.skuID(t, "黑色,S")
		in := PlaceInput{UserID: "u1", IdempotencyKey: "k1", Items: []ItemInput{one(blackL, 2)}}

		first, err := f.svc.Place(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		again, err := f.svc.Place(ctx, in)
		if err != nil || again.OrderSn != first.OrderSn || again.Amount != first.Amount {
			t.Fatalf("replay = %+v, %v; want order %s again", again, err, first.OrderSn)
		}
		if got := f.stock(t, blackL); got != 198 || f.count(t, "orders") != 1 {
			t.Errorf("after replay: stock %d, orders %d; want 198, 1", got, f.count(t, "orders"))
		}

		changed := in
		changed.Items = []ItemInput{one(blackL, 3)}
		if _, err := f.svc.Place(ctx, changed); !errors.Is(err, ErrIdempotencyKeyReused) {
			t.Errorf("same key, other input: err = %v, want IDEMPOTENCY_KEY_REUSED", err)
		}

		// Keys are scoped to the user: another user's k1 is a new request.
		other := in
		other.UserID = "u2"
		if o, err := f.svc.Place(ctx, other); err != nil || o.OrderSn == first.OrderSn {
			t.Errorf("other user's k1 = %+v, %v; want a new order", o, err)
		}

		// A failed attempt does not burn its key.
		retry := PlaceInput{UserID: "u1", IdempotencyKey: "k2", Items: []ItemInput{one(blackS, 1)}}
		if _, err := f.svc.Place(ctx, retry); !errors.Is(err, ErrOutOfStock) {
			t.Fatalf("err = %v, want OUT_OF_STOCK", err)
		}
		f.setStock(t, blackS, 5)
		if o, err := f.svc.Place(ctx, retry); err != nil || o == nil {
			t.Fatalf("retry after restock: %v", err)
		}

		// After the retention the key is free again.
		f.advance(f.svc.cfg.Retention + time.Minute)
		third, err := f.svc.Place(ctx, in)
		if err != nil || third.OrderSn == first.OrderSn {
			t.Errorf("after retention = %+v, %v; want a new order", third, err)
		}
	})
}

func TestIdempotencyInProgressAndAbandonedClaim(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL := f.skuID(t, "黑色,L")
		in := PlaceInput{UserID: "u1", IdempotencyKey: "k", Items: []ItemInput{one(blackL, 1)}}
		// A claim held by a request that is still running (or crashed).
		c, replay, err := f.svc.claimKey(ctx, "u1", "k", requestHash(in), time.Hour)
		if err != nil || c == nil || replay != "" {
			t.Fatalf("claimKey = %v, %q, %v", c, replay, err)
		}
		if _, err := f.svc.Place(ctx, in); !errors.Is(err, ErrIdempotencyInProgress) {
			t.Errorf("while claimed: err = %v, want IDEMPOTENCY_IN_PROGRESS", err)
		}
		// Its lease runs out: a retry takes the key over and succeeds, and the
		// stale owner can neither finish nor release it.
		f.advance(f.svc.cfg.Lease + time.Second)
		o, err := f.svc.Place(ctx, in)
		if err != nil {
			t.Fatalf("after the lease: %v", err)
		}
		f.svc.release(ctx, c)
		if n, _ := db.Client.Idempotency.Query().Where(idempotency.Key("k"), idempotency.State(stateDone)).Count(ctx); n != 1 {
			t.Errorf("DONE records = %d, want 1 (a stale owner must not release a taken-over key)", n)
		}
		if again, err := f.svc.Place(ctx, in); err != nil || again.OrderSn != o.OrderSn {
			t.Errorf("replay = %+v, %v; want %s", again, err, o.OrderSn)
		}
	})
}

// Without a key, seed 002's fallback: the same input from the same user
// within the window is the same request; a different input or a later one is not.
func TestFallbackKey(t *testing.T) {
	eachPath(t, func(t *testing.T, db *store.DB, p path) {
		ctx := context.Background()
		f := setup(t, db, p)
		blackL := f.skuID(t, "黑色,L")
		in := PlaceInput{UserID: "u1", Items: []ItemInput{one(blackL, 1)}}
		a, err := f.svc.Place(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		b, err := f.svc.Place(ctx, in)
		if err != nil || b.OrderSn != a.OrderSn {
			t.Errorf("double click = %+v, %v; want order %s", b, err, a.OrderSn)
		}
		in2 := in
		in2.Remark = "another"
		if c, err := f.svc.Place(ctx, in2); err != nil || c.OrderSn == a.OrderSn {
			t.Errorf("different input = %+v, %v; want a new order", c, err)
		}
		f.advance(f.svc.cfg.FallbackWindow + time.Second)
		if d, err := f.svc.Place(ctx, in); err != nil || d.OrderSn == a.OrderSn {
			t.Errorf("after the window = %+v, %v; want a new order", d, err)
		}
		if got := f.stock(t, blackL); got != 197 {
			t.Errorf("stock = %d, want 197 (three orders)", got)
		}
		if n, err := f.svc.PurgeKeys(ctx); err != nil || n != 1 {
			t.Errorf("PurgeKeys = %d, %v; want 1 expired record", n, err)
		}
	})
}
