package cart

import (
	"context"
	"errors"
	"fmt"
	"time"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/internal/platform/store"
	"storefront/internal/pricing"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// errGone is the one answer for a cart that does not exist, has expired or
// belongs to someone else: the caller cannot tell these apart.
var errGone = fmt.Errorf("%w: no such cart", errs.NotFound)

// errNoRow is errGone when no row has the token: only then may the token be
// an empty cart handed out and not stored (empty.go). A row that is someone
// else's or expired is gone even when its token was once such a cart's, or
// anyone with the id of an anonymous empty cart that was stored and then
// attached would read it as empty again (and be let at it).
var errNoRow = fmt.Errorf("%w", errGone)

// Cart returns the cart token as who sees it, or nil when it does not
// exist for who (unknown, expired, or another customer's).
func (s *Service) Cart(ctx context.Context, who, token string) (*Cart, error) {
	r, err := s.visible(ctx, s.db.Client, who, token)
	if errors.Is(err, errGone) {
		owner, at, ok := s.unstored(token, who)
		ok = ok && errors.Is(err, errNoRow)
		if !ok {
			return nil, nil
		}
		// A customer's empty cart id names their open cart once they have
		// one (its first line, or cartCreate's, went there): the read
		// answers the cart a change of this id changes.
		open, err := s.openCart(ctx, owner)
		if err != nil || open == nil {
			return s.empty(token, owner, at), err
		}
		return s.view(ctx, open)
	}
	if err != nil {
		return nil, err
	}
	return s.view(ctx, r)
}

// visible reads the cart token if who may see it: a cart with no owner is
// anyone's who knows its id, an owned one only its owner's.
func (s *Service) visible(ctx context.Context, c *ent.Client, who, token string) (*ent.Cart, error) {
	if !wellFormed(token) {
		return nil, errGone
	}
	r, err := c.Cart.Query().Where(cart.Token(token)).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, errNoRow
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading cart: %w", err))
	}
	if r.Owner != "" && r.Owner != who || s.expired(r.UpdatedAt) {
		return nil, errGone
	}
	return r, nil
}

// openCart is who's open cart, or nil when who is anonymous or has none
// (or only an expired one).
func (s *Service) openCart(ctx context.Context, who string) (*ent.Cart, error) {
	if who == "" {
		return nil, nil
	}
	open, err := s.db.Client.Cart.Query().Where(cart.OpenOwner(who)).Only(ctx)
	switch {
	case ent.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, store.Classify(fmt.Errorf("reading the customer's cart: %w", err))
	case s.expired(open.UpdatedAt):
		return nil, nil
	}
	return open, nil
}

func (s *Service) expired(updated time.Time) bool { return !updated.After(s.now().Add(-s.cfg.TTL)) }

// view builds what the shopper sees of r: every line at its SKU's current
// price, and a warning for each line that cannot be bought as it is. It
// acknowledges the prices it shows only when the answer shows them
// (ShowingPrices).
func (s *Service) view(ctx context.Context, r *ent.Cart) (*Cart, error) {
	rows, err := s.db.Client.CartLine.Query().Where(cartline.CartID(r.ID)).Order(cartline.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading cart lines: %w", err))
	}
	ids := make([]int64, len(rows))
	for i, l := range rows {
		ids[i] = l.ItemID
	}
	skus, err := current(ctx, s.db.Client, ids)
	if err != nil {
		return nil, err
	}
	c := &Cart{ID: r.Token, Status: r.Status, UpdatedAt: r.UpdatedAt, ExpiresAt: r.UpdatedAt.Add(s.cfg.TTL), owner: r.Owner,
		Lines: []*Line{}, Warnings: []*Warning{}}
	if r.OrderSn != nil {
		c.orderSn = *r.OrderSn
	}
	if r.UserCouponID != nil {
		c.userCouponID = *r.UserCouponID
	}
	var seen []ack
	for _, l := range rows {
		k := skus[l.ItemID]
		if k == nil || k.Edges.Goods == nil {
			// The goods is gone: there is nothing to show the line with (a
			// Sku and a Goods are required), so it is listed as a warning the
			// shopper can remove it by.
			c.warn(WarnSkuUnavailable, l.ID, fmt.Sprintf("SKU %d is no longer sold; remove it from the cart", l.ItemID))
			continue
		}
		line := &Line{ID: l.ID, ItemID: l.ItemID, GoodsID: k.GoodsID, Quantity: l.Quantity, UnitPrice: k.SellPrice}
		c.Lines = append(c.Lines, line)
		c.Cost.TotalQuantity += line.Quantity
		if c.Status != enums.CartOpen {
			continue // an order now: its own lines say what was bought
		}
		name := k.Edges.Goods.Name + " " + k.SpecValueStr
		switch avail := k.Stock - k.LockStock; {
		case !onSale(k):
			c.warn(WarnSkuUnavailable, l.ID, name+" is not on sale")
		case avail <= 0:
			c.warn(WarnOutOfStock, l.ID, name+" is out of stock")
		case avail < l.Quantity:
			c.warn(WarnNotEnoughStock, l.ID, fmt.Sprintf("%s: %d left, %d in the cart", name, avail, l.Quantity))
		}
		if k.SellPrice != money.Money(l.SeenPrice) {
			c.warn(WarnPriceChanged, l.ID, fmt.Sprintf("%s now costs %s (was %s)", name, k.SellPrice, money.Money(l.SeenPrice)))
			seen = append(seen, ack{l.ID, l.SeenPrice, int64(k.SellPrice)})
		}
	}
	if err := c.price(); err != nil {
		return nil, err
	}
	if err := s.discount(ctx, c); err != nil {
		return nil, err
	}
	if pricesShown(ctx) {
		s.acknowledge(ctx, seen)
	}
	return c, nil
}

// ack is a line whose new price this read shows its shopper.
type ack struct{ line, was, now int64 }

// acknowledge stores the prices this read showed as the ones the shopper
// saw: checkoutCart refuses a line above its seen price (PRICE_CHANGED),
// and the read that warned of a rise is what lets the next checkout charge
// it. Each is a CAS on the price read, so a change that stored another
// price meanwhile keeps its own. A failure only leaves the warning (and
// the refusal) for the next read: the read still answers.
func (s *Service) acknowledge(ctx context.Context, seen []ack) {
	for _, a := range seen {
		_, _ = s.db.Client.CartLine.Update().Where(cartline.ID(a.line), cartline.SeenPrice(a.was)).SetSeenPrice(a.now).Save(ctx)
	}
}

func (c *Cart) warn(code string, lineID int64, msg string) {
	c.Warnings = append(c.Warnings, &Warning{Code: code, LineID: &lineID, Message: msg})
}

// price sets the lines' subtotals and the cost through pricing, as checkout
// prices the order the cart becomes.
func (c *Cart) price() error {
	lines := make([]pricing.Line, len(c.Lines))
	for i, l := range c.Lines {
		lines[i] = pricing.Line{UnitPrice: l.UnitPrice, Quantity: l.Quantity}
	}
	q, err := pricing.Quote(lines, nil)
	if err != nil {
		return err
	}
	for i, l := range c.Lines {
		l.Subtotal = q.LineSubtotals[i]
	}
	c.Cost.Subtotal = q.Subtotal
	c.Cost.lines = c.Lines
	return nil
}
