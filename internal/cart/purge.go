package cart

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/internal/platform/store"
)

// Purge deletes carts untouched for the TTL, PurgeBatch at a time (one
// short transaction each, so a backlog never holds locks for long), and
// returns how many it deleted.
func (s *Service) Purge(ctx context.Context) (int, error) {
	total := 0
	for {
		cutoff := s.stamp().Add(-s.cfg.TTL)
		ids, err := s.db.Client.Cart.Query().Where(cart.UpdatedAtLTE(cutoff)).Limit(s.cfg.PurgeBatch).IDs(ctx)
		if err != nil {
			return total, store.Classify(fmt.Errorf("finding expired carts: %w", err))
		}
		if len(ids) == 0 {
			return total, nil
		}
		var n int
		err = store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
			// Carts first, again by age: one changed since it was listed is
			// kept, and only its lines go with a deleted cart.
			var err error
			if n, err = tx.Cart.Delete().Where(cart.IDIn(ids...), cart.UpdatedAtLTE(cutoff)).Exec(ctx); err != nil {
				return fmt.Errorf("deleting expired carts: %w", err)
			}
			live, err := tx.Cart.Query().Where(cart.IDIn(ids...)).IDs(ctx)
			if err != nil {
				return err
			}
			gone := without(ids, live)
			if _, err := tx.CartLine.Delete().Where(cartline.CartIDIn(gone...)).Exec(ctx); err != nil {
				return fmt.Errorf("deleting expired carts' lines: %w", err)
			}
			return nil
		})
		total += n
		if err != nil {
			return total, store.Classify(err)
		}
		if len(ids) < s.cfg.PurgeBatch {
			return total, nil
		}
	}
}

func without(ids, drop []int64) []int64 {
	d := make(map[int64]bool, len(drop))
	for _, id := range drop {
		d[id] = true
	}
	var out []int64
	for _, id := range ids {
		if !d[id] {
			out = append(out, id)
		}
	}
	return out
}
