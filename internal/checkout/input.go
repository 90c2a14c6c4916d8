package checkout

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"storefront/internal/vocab/input"
	"storefront/internal/vocab/money"
	"storefront/skumatrix"
)

// PlaceInput is an order request. Nothing in it can set a price (MaxPrice
// can only refuse one).
type PlaceInput struct {
	UserID string
	Items  []ItemInput
	Remark string
	// IdempotencyKey is the client's key ("" = none: the fallback window applies).
	IdempotencyKey string
	// Scope names what the order is placed for beyond its items (a cart:
	// "cart:<id>"); it is part of the request the key stands for, so one key
	// cannot answer one cart's order for another cart with the same items.
	// "" for placeOrder.
	Scope string
	// UserCouponID is the customer's claimed coupon to use (nil: none).
	UserCouponID *int64
	// AddressID is the buyer's address the order ships to (shipto.go): required when a line's goods ships under a freight
	// template, allowed always.
	AddressID *int64
}

// ItemInput names a SKU by ItemID, or by GoodsID + SpecValueIDs (any order).
type ItemInput struct {
	ItemID       *int64
	GoodsID      *int64
	SpecValueIDs []int64
	Quantity     int64
	// PoolID orders from that stock pool of the SKU, at its price.
	PoolID *int64
	// MaxPrice refuses the order with ErrPriceChanged when the SKU's unit
	// price is above it (checkoutCart: the price the buyer last saw). It is
	// a condition, not part of the request: a retry after the buyer saw the
	// new price keeps its key.
	MaxPrice *money.Money
}

// Column sizes of orders.remark and orders.user_id.
const (
	maxRemark = 255
	maxUserID = 64
)

// check validates the shape of in without touching the database.
func (s *Service) check(in PlaceInput) error {
	if in.UserID == "" || len(in.UserID) > maxUserID {
		return fmt.Errorf("%w: a user id of 1 to %d bytes is required", ErrInvalidInput, maxUserID)
	}
	if len(in.Items) == 0 {
		return fmt.Errorf("%w: an order needs at least one item", ErrInvalidInput)
	}
	if len(in.Items) > s.cfg.MaxLines {
		return fmt.Errorf("%w: %d items, at most %d per order", ErrInvalidInput, len(in.Items), s.cfg.MaxLines)
	}
	// Bytes, not characters: the column and ent's validator count bytes, and
	// a longer remark must be INVALID_INPUT, not an internal error.
	if len(in.Remark) > maxRemark {
		return fmt.Errorf("%w: remark longer than %d bytes", ErrInvalidInput, maxRemark)
	}
	if in.UserCouponID != nil && *in.UserCouponID <= 0 {
		return fmt.Errorf("%w: userCouponId %d", ErrInvalidInput, *in.UserCouponID)
	}
	if len(in.IdempotencyKey) > input.MaxKeyBytes {
		return fmt.Errorf("%w: idempotency key longer than %d bytes", ErrInvalidInput, input.MaxKeyBytes)
	}
	for i, it := range in.Items {
		switch {
		case it.ItemID != nil && (it.GoodsID != nil || it.SpecValueIDs != nil):
			return fmt.Errorf("%w: item %d: give itemId, or goodsId with specValueIds, not both", ErrInvalidInput, i+1)
		case it.ItemID == nil && it.GoodsID == nil:
			return fmt.Errorf("%w: item %d: give itemId, or goodsId with specValueIds", ErrInvalidInput, i+1)
		}
		if it.Quantity < 1 || it.Quantity > s.cfg.MaxQuantity {
			return fmt.Errorf("%w: item %d: quantity %d, want 1 to %d", ErrInvalidQuantity, i+1, it.Quantity, s.cfg.MaxQuantity)
		}
	}
	return nil
}

// requestHash is the SHA-256 of the canonical input: items in a fixed order,
// spec values as a spec key, so the same request spelled differently hashes
// the same, and any change of SKU, quantity or remark does not.
func requestHash(in PlaceInput) string {
	items := make([]string, len(in.Items))
	for i, it := range in.Items {
		if it.ItemID != nil {
			items[i] = "i:" + strconv.FormatInt(*it.ItemID, 10)
		} else {
			items[i] = "g:" + strconv.FormatInt(*it.GoodsID, 10) + ":" + skumatrix.SpecKey(it.SpecValueIDs)
		}
		if it.PoolID != nil {
			items[i] += "@" + strconv.FormatInt(*it.PoolID, 10)
		}
		items[i] += "*" + strconv.FormatInt(it.Quantity, 10)
	}
	slices.Sort(items)
	h := sha256.New()
	h.Write([]byte(strings.Join(items, ",")))
	h.Write([]byte{0})
	h.Write([]byte(in.Remark))
	if in.UserCouponID != nil {
		// Only when set, as Scope: a coupon changes what the key stands for.
		h.Write([]byte{0, 'c'})
		h.Write([]byte(strconv.FormatInt(*in.UserCouponID, 10)))
	}
	if in.Scope != "" {
		// Only when set, so that the hash of every placeOrder request (and
		// of its keys stored before Scope existed) stays what it was.
		h.Write([]byte{0})
		h.Write([]byte(in.Scope))
	}
	if in.AddressID != nil {
		// As Scope: only when set, so that every hash made before stays.
		h.Write([]byte("\x00ship:" + strconv.FormatInt(*in.AddressID, 10)))
	}
	return hex.EncodeToString(h.Sum(nil))
}
