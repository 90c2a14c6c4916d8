package cart

import (
	"context"
	"errors"
	"fmt"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// Attach makes the cart token the customer who's (sign-in). When they
// already have another open cart, its lines merge into this one
// (quantities added, held at the maximum) and the other cart is deleted:
// the cart the caller names is the one that lives on. An other cart that
// is checking out is left alone (see mergeOther).
func (s *Service) Attach(ctx context.Context, who, token string) (*Cart, error) {
	if who == "" {
		return nil, fmt.Errorf("%w: attaching a cart needs a customer token", errs.Unauthenticated)
	}
	for range 3 {
		c, err := s.change(ctx, who, token, func(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine) error {
			if r.Owner == who {
				return nil
			}
			if err := s.mergeOther(ctx, tx, who, r, have); err != nil {
				return err
			}
			return tx.Cart.UpdateOneID(r.ID).SetOwner(who).SetOpenOwner(who).Exec(ctx)
		})
		if errors.Is(err, errNoRow) {
			if _, _, ok := s.unstored(token, who); ok {
				// A cart handed out empty is stored now, anonymous, and
				// attached as any other on the next round (a customer may
				// keep one such row: their open cart).
				if _, err := s.create(ctx, "", token, nil); err != nil && !store.IsDuplicate(err) {
					return nil, err
				}
				continue
			}
		}
		if !store.IsDuplicate(err) {
			return c, err
		}
		// A concurrent sign-in of the same customer attached another cart
		// first: merge that one in now.
	}
	return nil, fmt.Errorf("%w: the customer's carts kept changing; retry", store.ErrUnavailable)
}

// mergeOther moves the lines of who's open cart, if any, into r and deletes
// it. An expired one is simply deleted: it was gone for its owner already.
func (s *Service) mergeOther(ctx context.Context, tx *ent.Tx, who string, r *ent.Cart, have []*ent.CartLine) error {
	other, err := tx.Cart.Query().Where(cart.OpenOwner(who)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the customer's cart: %w", err)
	}
	// Hold the other cart's row too before reading its lines, so a line
	// added to it from another device now is not lost with it.
	n, err := tx.Cart.Update().Where(cart.ID(other.ID), cart.CheckoutKeyIsNil()).AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("taking the customer's cart: %w", err)
	}
	if n == 0 {
		// A checkout of it holds a key: its lines may be an order already,
		// so it is neither merged nor deleted, and the sign-in does not wait
		// for it either. It gives up the open slot to r and stays
		// the customer's, by its id: COMPLETED when its checkout places the
		// order, OPEN with its lines when that is refused.
		if _, err := tx.Cart.Update().Where(cart.ID(other.ID), cart.OpenOwner(who)).ClearOpenOwner().Save(ctx); err != nil {
			return fmt.Errorf("releasing the open slot of the customer's cart in checkout: %w", err)
		}
		return nil
	}
	if !s.expired(other.UpdatedAt) {
		lines, err := linesOf(ctx, tx, other.ID)
		if err != nil {
			return err
		}
		adds := make([]add, len(lines))
		for i, l := range lines {
			adds[i] = add{item: l.ItemID, quantity: l.Quantity, price: money.Money(l.SeenPrice)}
		}
		if err := s.addTo(ctx, tx, r, have, adds, true); err != nil {
			return err
		}
	}
	if other.UserCouponID != nil && !s.expired(other.UpdatedAt) {
		// r was anonymous, so it has none: the customer's choice lives on.
		if err := tx.Cart.UpdateOneID(r.ID).SetUserCouponID(*other.UserCouponID).Exec(ctx); err != nil {
			return fmt.Errorf("keeping the merged cart's coupon: %w", err)
		}
	}
	if _, err := tx.CartLine.Delete().Where(cartline.CartID(other.ID)).Exec(ctx); err != nil {
		return fmt.Errorf("deleting the merged cart's lines: %w", err)
	}
	return tx.Cart.DeleteOneID(other.ID).Exec(ctx)
}
