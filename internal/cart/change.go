package cart

import (
	"context"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// stamp is now as the cart tables store it: to the second, so that the
// lease compares exactly on every backend.
func (s *Service) stamp() time.Time { return s.now().Truncate(time.Second) }

// change runs fn on the cart token and its lines in one transaction, with
// the cart row taken first (see take), and returns the cart as changed.
func (s *Service) change(ctx context.Context, who, token string, fn func(ctx context.Context, tx *ent.Tx, r *ent.Cart, lines []*ent.CartLine) error) (*Cart, error) {
	if !wellFormed(token) {
		return nil, errGone
	}
	now := s.stamp()
	var r *ent.Cart
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		var err error
		if r, err = s.take(ctx, tx, who, token, now); err != nil {
			return err
		}
		lines, err := linesOf(ctx, tx, r.ID)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx, r, lines); err != nil {
			return err
		}
		r, err = tx.Cart.Get(ctx, r.ID) // as fn left it
		return err
	})
	if err != nil {
		return nil, store.Classify(err)
	}
	return s.view(ctx, r)
}

// take marks the cart token changed by who at now and returns it, if who may
// change it: visible to who, OPEN, and with no checkout that may have
// ordered its lines. The UPDATE comes first so that the cart's row is held
// to COMMIT: two changes of one cart queue here instead of one losing the
// other's lines, and a checkout's claim (which needs the same row) cannot
// slip between this transaction's read of the lines and its write.
func (s *Service) take(ctx context.Context, tx *ent.Tx, who, token string, now time.Time) (*ent.Cart, error) {
	for again := true; ; again = false {
		n, err := tx.Cart.Update().
			Where(cart.Token(token), cart.OwnerIn("", who), cart.StatusEQ(enums.CartOpen), cart.CheckoutKeyIsNil(), cart.UpdatedAtGT(now.Add(-s.cfg.TTL))).
			AddVersion(1).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return nil, fmt.Errorf("taking cart: %w", err)
		}
		r, err := s.visible(ctx, tx.Client(), who, token)
		switch {
		case err != nil:
			return nil, err
		case n == 1:
			return r, nil
		case r.Status == enums.CartCompleted:
			return nil, ErrCompleted
		case r.CheckoutKey != nil:
			return nil, errPending
		case again:
			// Open, visible and unclaimed, yet the UPDATE took nothing: the
			// row was stored after the UPDATE looked (a first line of the
			// same empty cart id, committed meanwhile). PostgreSQL's UPDATE
			// does not wait for another transaction's uncommitted INSERT, as
			// InnoDB's locks make it; the read after it sees the row. Take
			// it now.
			continue
		}
		return nil, errGone
	}
}

func linesOf(ctx context.Context, tx *ent.Tx, cartID int64) ([]*ent.CartLine, error) {
	lines, err := tx.CartLine.Query().Where(cartline.CartID(cartID)).Order(cartline.ByID()).All(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading cart lines: %w", err)
	}
	return lines, nil
}
