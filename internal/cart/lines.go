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

// add is units of one SKU going into a cart, at the price the shopper saw.
type add struct {
	item, quantity int64
	price          money.Money
}

// Create makes a cart with lines (none is fine: it is then handed out
// and not stored until its first line, see empty.go). With a customer (who
// != ""), the cart is theirs; a customer has one open cart, so when they
// have one already the lines go into it and that cart is returned.
func (s *Service) Create(ctx context.Context, who string, lines []LineInput) (*Cart, error) {
	adds, err := s.resolve(ctx, lines)
	if err != nil {
		return nil, err
	}
	for range 3 {
		c, err := s.fill(ctx, who, newToken(), adds)
		if !store.IsDuplicate(err) {
			return c, err
		}
		// Another request made this customer's open cart (or, once in 2^64
		// carts, took the token) between our read and insert: go again.
	}
	return nil, fmt.Errorf("%w: the customer's cart kept changing; retry", store.ErrUnavailable)
}

// fill puts adds into who's open cart when they have one, else into a new
// cart stored under token; with no adds and no open cart nothing is stored
// and an empty cart's id is handed out. A duplicate key error means a race
// the caller goes again on.
func (s *Service) fill(ctx context.Context, who, token string, adds []add) (*Cart, error) {
	open, err := s.openCart(ctx, who)
	if err != nil {
		return nil, err
	}
	if open != nil {
		return s.change(ctx, who, open.Token, func(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine) error {
			return s.addTo(ctx, tx, r, have, adds, false)
		})
	}
	if len(adds) == 0 {
		now := s.stamp()
		return s.empty(s.emptyToken(who, now), who, now), nil
	}
	return s.create(ctx, who, token, adds)
}

func (s *Service) create(ctx context.Context, who, token string, adds []add) (*Cart, error) {
	now := s.stamp()
	var r *ent.Cart
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		if who != "" {
			// An expired open cart of the customer is gone for them; it must
			// not keep the slot of their open cart until the purge.
			if _, err := tx.Cart.Update().Where(cart.OpenOwner(who), cart.UpdatedAtLTE(now.Add(-s.cfg.TTL))).ClearOpenOwner().Save(ctx); err != nil {
				return fmt.Errorf("releasing an expired cart: %w", err)
			}
		}
		q := tx.Cart.Create().SetToken(token).SetOwner(who).SetUpdatedAt(now).SetCreatedAt(now)
		if who != "" {
			q = q.SetOpenOwner(who)
		}
		var err error
		if r, err = q.Save(ctx); err != nil {
			return err
		}
		return s.addTo(ctx, tx, r, nil, adds, false)
	})
	if err != nil {
		if store.IsDuplicate(err) {
			return nil, err
		}
		return nil, store.Classify(err)
	}
	return s.view(ctx, r)
}

// AddLines adds lines to the cart token: a SKU already in it gets the
// quantity added to its line.
func (s *Service) AddLines(ctx context.Context, who, token string, lines []LineInput) (*Cart, error) {
	if len(lines) == 0 {
		return nil, fmt.Errorf("%w: no lines to add", errs.InvalidInput)
	}
	adds, err := s.resolve(ctx, lines)
	if err != nil {
		return nil, err
	}
	for range 3 {
		c, err := s.change(ctx, who, token, func(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine) error {
			return s.addTo(ctx, tx, r, have, adds, false)
		})
		if !errors.Is(err, errNoRow) {
			return c, err
		}
		owner, _, ok := s.unstored(token, who)
		if !ok {
			return nil, err
		}
		// The first line of a cart handed out empty stores it, under its id
		// (a customer's goes into their open cart if they have one, as
		// cartCreate's would).
		if c, err = s.fill(ctx, owner, token, adds); !store.IsDuplicate(err) {
			return c, err
		}
		// Another first line stored it meanwhile: add to it.
	}
	return nil, fmt.Errorf("%w: the cart kept changing; retry", store.ErrUnavailable)
}

// resolve validates lines and turns them into adds, one per SKU.
func (s *Service) resolve(ctx context.Context, lines []LineInput) ([]add, error) {
	if err := s.checkLines(lines); err != nil {
		return nil, err
	}
	skus, err := s.skus(ctx, lines)
	if err != nil {
		return nil, err
	}
	var adds []add
	at := map[int64]int{}
	for i, k := range skus {
		j, ok := at[k.ID]
		if !ok {
			j, at[k.ID] = len(adds), len(adds)
			adds = append(adds, add{item: k.ID, price: k.SellPrice})
		}
		adds[j].quantity += lines[i].Quantity
		if err := s.checkQuantity(i, adds[j].quantity, 1); err != nil {
			return nil, err
		}
	}
	return adds, nil
}

// addTo adds adds to the cart r, whose lines are have. A line over the
// maximum is refused, or with capped (the merge of two carts) held at it.
func (s *Service) addTo(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine, adds []add, capped bool) error {
	byItem := make(map[int64]*ent.CartLine, len(have))
	for _, l := range have {
		byItem[l.ItemID] = l
	}
	n := len(have)
	for i, a := range adds {
		l := byItem[a.item]
		if l == nil {
			n++
			if err := s.checkCount(n, "lines in the cart"); err != nil {
				return err
			}
			if capped {
				a.quantity = min(a.quantity, s.maxQuantity())
			}
			if _, err := tx.CartLine.Create().SetCartID(r.ID).SetItemID(a.item).SetQuantity(a.quantity).SetSeenPrice(int64(a.price)).Save(ctx); err != nil {
				return fmt.Errorf("adding a cart line: %w", err)
			}
			continue
		}
		q := l.Quantity + a.quantity
		if capped {
			q = min(q, s.maxQuantity())
		} else if err := s.checkQuantity(i, q, 1); err != nil {
			return fmt.Errorf("%w (%d already in the cart)", err, l.Quantity)
		}
		if err := tx.CartLine.UpdateOneID(l.ID).SetQuantity(q).SetSeenPrice(int64(a.price)).Exec(ctx); err != nil {
			return fmt.Errorf("updating a cart line: %w", err)
		}
	}
	return nil
}

// UpdateLines sets the quantities of lines of the cart token; 0 removes a
// line. A line id not in the cart is NOT_FOUND and nothing changes.
func (s *Service) UpdateLines(ctx context.Context, who, token string, updates []LineUpdate) (*Cart, error) {
	if len(updates) == 0 {
		return nil, fmt.Errorf("%w: no lines to update", errs.InvalidInput)
	}
	if err := s.checkCount(len(updates), "lines"); err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for i, u := range updates {
		if err := s.checkQuantity(i, u.Quantity, 0); err != nil {
			return nil, err
		}
		if seen[u.LineID] {
			return nil, fmt.Errorf("%w: line %d is named twice", errs.InvalidInput, u.LineID)
		}
		seen[u.LineID] = true
	}
	return s.changeLines(ctx, who, token, updates[0].LineID, func(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine) error {
		byID, err := own(have, len(updates), func(i int) int64 { return updates[i].LineID })
		if err != nil {
			return err
		}
		items := make([]int64, len(have))
		for i, l := range have {
			items[i] = l.ItemID
		}
		skus, err := current(ctx, tx.Client(), items)
		if err != nil {
			return err
		}
		for _, u := range updates {
			l := byID[u.LineID]
			if u.Quantity == 0 {
				if err := tx.CartLine.DeleteOneID(l.ID).Exec(ctx); err != nil {
					return fmt.Errorf("removing a cart line: %w", err)
				}
				continue
			}
			// The shopper looked at the line to change it: its current
			// price is the one they saw.
			upd := tx.CartLine.UpdateOneID(l.ID).SetQuantity(u.Quantity)
			if k := skus[l.ItemID]; k != nil {
				upd = upd.SetSeenPrice(int64(k.SellPrice))
			}
			if err := upd.Exec(ctx); err != nil {
				return fmt.Errorf("updating a cart line: %w", err)
			}
		}
		return nil
	})
}

// RemoveLines removes lines of the cart token; a line id not in the cart is
// NOT_FOUND and nothing changes.
func (s *Service) RemoveLines(ctx context.Context, who, token string, lineIDs []int64) (*Cart, error) {
	if len(lineIDs) == 0 {
		return nil, fmt.Errorf("%w: no lines to remove", errs.InvalidInput)
	}
	if err := s.checkCount(len(lineIDs), "lines"); err != nil {
		return nil, err
	}
	return s.changeLines(ctx, who, token, lineIDs[0], func(ctx context.Context, tx *ent.Tx, r *ent.Cart, have []*ent.CartLine) error {
		if _, err := own(have, len(lineIDs), func(i int) int64 { return lineIDs[i] }); err != nil {
			return err
		}
		_, err := tx.CartLine.Delete().Where(cartline.CartID(r.ID), cartline.IDIn(lineIDs...)).Exec(ctx)
		return err
	})
}

// own checks that the n line ids id(i) are all lines of have.
func own(have []*ent.CartLine, n int, id func(int) int64) (map[int64]*ent.CartLine, error) {
	byID := make(map[int64]*ent.CartLine, len(have))
	for _, l := range have {
		byID[l.ID] = l
	}
	for i := range n {
		if byID[id(i)] == nil {
			return nil, noLine(id(i))
		}
	}
	return byID, nil
}

func noLine(id int64) error { return fmt.Errorf("%w: no line %d in the cart", errs.NotFound, id) }

// changeLines runs fn on the cart token's lines as change does. The id of
// an empty cart handed out and not stored reads as that cart, OPEN with no
// lines, so a change of its lines answers what it answers for a stored cart
// without the line, lineID's NOT_FOUND "no line", not "no such cart"; once its customer has an open cart, the id names that cart,
// as for a read (Cart) and cartLinesAdd.
func (s *Service) changeLines(ctx context.Context, who, token string, lineID int64, fn func(ctx context.Context, tx *ent.Tx, r *ent.Cart, lines []*ent.CartLine) error) (*Cart, error) {
	c, err := s.change(ctx, who, token, fn)
	if !errors.Is(err, errNoRow) {
		return c, err
	}
	owner, _, ok := s.unstored(token, who)
	if !ok {
		return nil, err
	}
	open, err := s.openCart(ctx, owner)
	if err != nil {
		return nil, err
	}
	if open != nil {
		return s.change(ctx, who, open.Token, fn)
	}
	return nil, noLine(lineID)
}
