package cart

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/errs"
	"storefront/money"
	"storefront/store"
)

// Attach makes the cart token the customer who's (sign-in). When they
// already have another open cart, its lines merge into this one
// (quantities added, held at the maximum) and the other cart is deleted:
// the cart the caller names is the one that lives on.
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
	// added to it from another device now is not lost with it; a cart whose
	// checkout may have ordered its lines is not merged away.
	n, err := tx.Cart.Update().Where(cart.ID(other.ID), cart.CheckoutKeyIsNil()).AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("taking the customer's cart: %w", err)
	}
	if n == 0 {
		return errPending
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
	if _, err := tx.CartLine.Delete().Where(cartline.CartID(other.ID)).Exec(ctx); err != nil {
		return fmt.Errorf("deleting the merged cart's lines: %w", err)
	}
	return tx.Cart.DeleteOneID(other.ID).Exec(ctx)
}
