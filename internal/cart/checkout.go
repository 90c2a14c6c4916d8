package cart

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"storefront/ent"
	"storefront/ent/cart"
	"storefront/ent/cartline"
	"storefront/internal/checkout"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/input"
	"storefront/internal/vocab/money"
)

// Checkout places the order of the cart token for the customer who, through
// checkout.Service.Place (prices re-read, stock by CAS, idempotency, group
// commit), and completes the cart with it. The same cart again answers the
// same order; of concurrent checkouts of one cart one places the order and
// the others answer IDEMPOTENCY_IN_PROGRESS (or, once it is placed, the
// order). A refused order (OUT_OF_STOCK, SKU_UNAVAILABLE…) leaves the cart
// OPEN and as it was.
//
// key is the client's Idempotency-Key ("" = none: the cart's own key
// "cart:TOKEN:VERSION" is used, which is the same for the same cart). Once
// a checkout may have placed an order, every retry of the cart uses that
// attempt's key, whatever key it brings: so it replays that order rather
// than placing a second one.
func (s *Service) Checkout(ctx context.Context, who, token, key string) (*checkout.Order, error) {
	return s.CheckoutWith(ctx, who, token, key, CheckoutOptions{})
}

// CheckoutOptions are what an order placed from a cart carries beside its
// lines (placeOrder's: checkout.PlaceInput).
type CheckoutOptions struct {
	// AddressID ships the order to the buyer's address (nil: none).
	AddressID *int64
	// UserCouponID is the customer's claimed coupon for the order (nil:
	// the cart's chosen one, if any).
	UserCouponID *int64
}

// CheckoutWith is Checkout with the order's address and coupon.
func (s *Service) CheckoutWith(ctx context.Context, who, token, key string, opts CheckoutOptions) (*checkout.Order, error) {
	if who == "" {
		return nil, fmt.Errorf("%w: checkout needs a customer token", errs.Unauthenticated)
	}
	if len(key) > input.MaxKeyBytes {
		return nil, fmt.Errorf("%w: idempotency key longer than %d bytes", errs.InvalidInput, input.MaxKeyBytes)
	}
	for range 3 {
		r, err := s.visible(ctx, s.db.Client, who, token)
		if errors.Is(err, errNoRow) {
			if owner, _, ok := s.unstored(token, who); ok {
				if owner == "" {
					return nil, fmt.Errorf("%w: sign in and attach the cart (cartBuyerIdentityUpdate) before checking it out", errs.Forbidden)
				}
				// The id names the customer's open cart when they have one,
				// as it does for a read and a change (read.go: Cart).
				if r, err = s.openCart(ctx, owner); err == nil && r == nil {
					return nil, fmt.Errorf("%w: the cart is empty", errs.InvalidInput)
				}
			}
		}
		if err != nil {
			return nil, err
		}
		now := s.stamp()
		switch {
		case r.Owner == "":
			return nil, fmt.Errorf("%w: sign in and attach the cart (cartBuyerIdentityUpdate) before checking it out", errs.Forbidden)
		case r.Status == enums.CartCompleted:
			return s.order(ctx, r)
		case r.CheckoutLease != nil && r.CheckoutLease.After(now):
			return nil, errPending
		}
		a := &attempt{cart: r.ID, key: key, lease: now.Add(s.cfg.Lease), opts: opts}
		if a.opts.UserCouponID == nil {
			// The cart's own coupon, of the version the claim below holds.
			a.opts.UserCouponID = r.UserCouponID
		}
		switch {
		case r.CheckoutKey != nil:
			a.key = *r.CheckoutKey
		case a.key == "":
			a.key = autoPrefix + r.Token + ":" + strconv.FormatInt(r.Version, 10)
		}
		// The claim: a CAS on the version read (the lines to be ordered are
		// those of this version, and no change can come in while the key is
		// set) and on the lease (one checkout at a time).
		q := s.db.Client.Cart.Update().Where(cart.ID(r.ID), cart.Version(r.Version), cart.StatusEQ(enums.CartOpen))
		if r.CheckoutLease == nil {
			q = q.Where(cart.CheckoutLeaseIsNil())
		} else {
			q = q.Where(cart.CheckoutLease(*r.CheckoutLease))
		}
		n, err := q.SetCheckoutKey(a.key).SetCheckoutLease(a.lease).Save(ctx)
		if err != nil {
			return nil, store.Classify(fmt.Errorf("claiming the cart: %w", err))
		}
		if n == 1 {
			return s.place(ctx, who, r, a)
		}
		// Another checkout or a change came first: look again.
	}
	return nil, errPending
}

// autoPrefix starts the cart's own idempotency key, used when the client
// sends none: "cart:<token>:<version>".
const autoPrefix = "cart:"

// attempt is a claimed checkout of a cart; lease doubles as its owner's token.
type attempt struct {
	cart  int64
	key   string
	lease time.Time
	opts  CheckoutOptions // the order's address and coupon
}

func (s *Service) place(ctx context.Context, who string, r *ent.Cart, a *attempt) (*checkout.Order, error) {
	lines, err := s.db.Client.CartLine.Query().Where(cartline.CartID(r.ID)).Order(cartline.ByID()).All(ctx)
	if err != nil {
		s.settle(ctx, a, false)
		return nil, store.Classify(fmt.Errorf("reading cart lines: %w", err))
	}
	if len(lines) == 0 {
		s.settle(ctx, a, true)
		return nil, fmt.Errorf("%w: the cart is empty", errs.InvalidInput)
	}
	// The cart is part of the request the key stands for: a key that placed
	// another cart's order (even of the same items) is IDEMPOTENCY_KEY_REUSED,
	// never that order. Each line is refused above the price the buyer last
	// saw (PRICE_CHANGED): a rise is charged only after a read showed it.
	in := checkout.PlaceInput{UserID: who, IdempotencyKey: a.key, Items: make([]checkout.ItemInput, len(lines)),
		AddressID: a.opts.AddressID, UserCouponID: a.opts.UserCouponID}
	if !strings.HasPrefix(a.key, autoPrefix+r.Token+":") {
		// This cart's own key names it already (and so keeps the
		// fingerprint its records had before Scope existed).
		in.Scope = "cart:" + r.Token
	}
	for i, l := range lines {
		seen := money.Money(l.SeenPrice)
		in.Items[i] = checkout.ItemInput{ItemID: &l.ItemID, Quantity: l.Quantity, MaxPrice: &seen}
	}
	o, err := s.placeOrder(ctx, in)
	if err != nil {
		s.settle(ctx, a, isRefusal(err))
		return nil, err
	}
	// The order is placed: complete the cart with it. Should this fail, the
	// cart keeps the key, and the next checkout of it replays this order and
	// completes the cart then.
	_, err = s.db.Client.Cart.Update().Where(cart.ID(a.cart), cart.CheckoutLease(a.lease), cart.StatusEQ(enums.CartOpen)).
		SetStatus(enums.CartCompleted).SetOrderSn(o.OrderSn).ClearOpenOwner().ClearCheckoutLease().AddVersion(1).Save(ctx)
	if err != nil {
		s.settle(ctx, a, false)
	}
	return o, nil
}

// settle ends a checkout attempt that did not complete the cart: a refusal
// frees the cart (OPEN, its lines as they were, changes allowed again); an
// attempt that may have placed the order keeps its key for the retry and
// only gives up the lease, so that retry need not wait for it.
func (s *Service) settle(ctx context.Context, a *attempt, refused bool) {
	if ctx.Err() != nil {
		// The request is over; the cart must still not wait out the lease.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
	}
	u := s.db.Client.Cart.Update().Where(cart.ID(a.cart), cart.CheckoutLease(a.lease)).ClearCheckoutLease()
	if refused {
		u = u.ClearCheckoutKey()
	}
	_, _ = u.Save(ctx) // at worst the lease runs out
}

// order answers the order a completed cart became.
func (s *Service) order(ctx context.Context, r *ent.Cart) (*checkout.Order, error) {
	o, err := s.checkout.Order(ctx, r.Owner, false, *r.OrderSn)
	if err == nil && o == nil {
		return nil, fmt.Errorf("order %s of cart %s not found", *r.OrderSn, r.Token) // the order table lost a row: INTERNAL
	}
	return o, err
}

// isRefusal says whether err is a checkout's definite "no": the order was
// not placed and its key is free again. Anything else (unavailable, a
// deadline, a checkout still running) may have placed it.
func isRefusal(err error) bool {
	if errors.Is(err, checkout.ErrIdempotencyInProgress) {
		return false
	}
	return errors.Is(err, errs.InvalidInput) || errors.Is(err, errs.NotFound) || errors.Is(err, errs.Conflict) ||
		errors.Is(err, errs.Forbidden) || errors.Is(err, errs.Unauthenticated)
}
