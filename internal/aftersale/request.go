package aftersale

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"storefront/ent"
	"storefront/ent/aftersale"
	"storefront/ent/orderline"
	"storefront/internal/checkout"
	"storefront/internal/payments"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/input"
	"storefront/internal/vocab/money"
)

// unguardedWhole takes the whole refund's guards away (its order's state
// and its units' shipping): only reconcile's test sets it, to show that
// reconcile catches what they prevent.
var unguardedWhole bool

// Limits of a request's shape.
const (
	MaxLines = 50
	MaxText  = 255
)

// RequestInput is requestAfterSale's input.
type RequestInput struct {
	UserID         string
	OrderSn        string
	Type           enums.AfterSaleType
	Lines          []LineInput
	Reason         string
	IdempotencyKey string
}

// LineInput is some units of one order line, by its SKU.
type LineInput struct {
	ItemID   int64
	Quantity int64
}

// check validates the shape of in without the database.
func (in *RequestInput) check() error {
	if in.OrderSn == "" || len(in.OrderSn) > 32 {
		return fmt.Errorf("%w: an order number is required", ErrInvalidInput)
	}
	if in.Type != enums.AfterSaleRefundOnly && in.Type != enums.AfterSaleReturnAndRefund {
		return fmt.Errorf("%w: type must be REFUND_ONLY or RETURN_AND_REFUND", ErrInvalidInput)
	}
	if len(in.Lines) == 0 || len(in.Lines) > MaxLines {
		return fmt.Errorf("%w: 1 to %d lines are required", ErrInvalidInput, MaxLines)
	}
	seen := map[int64]bool{}
	for _, l := range in.Lines {
		if l.Quantity < 1 {
			return fmt.Errorf("%w: SKU %d: quantity %d, at least 1", ErrQuantity, l.ItemID, l.Quantity)
		}
		if seen[l.ItemID] {
			return fmt.Errorf("%w: SKU %d named twice", ErrInvalidInput, l.ItemID)
		}
		seen[l.ItemID] = true
	}
	if err := checkReason(in.Reason); err != nil {
		return err
	}
	if len(in.IdempotencyKey) > input.MaxKeyBytes {
		return fmt.Errorf("%w: idempotency key over %d bytes", ErrInvalidInput, input.MaxKeyBytes)
	}
	return nil
}

// checkReason is the one rule of a reason, a refund's or a rejection's:
// 1 to MaxText bytes, what after_sale and refund rows store.
func checkReason(reason string) error {
	if reason == "" || len(reason) > MaxText {
		return fmt.Errorf("%w: a reason of 1 to %d bytes is required", ErrInvalidInput, MaxText)
	}
	return nil
}

// hash is the canonical request under its key: the operation, the order,
// the type, the lines in SKU order and the reason.
func (in *RequestInput) hash() string {
	lines := slices.SortedFunc(slices.Values(in.Lines), func(a, b LineInput) int { return cmp.Compare(a.ItemID, b.ItemID) })
	b, _ := json.Marshal(struct {
		Op, OrderSn, Type, Reason string
		Lines                     []LineInput
	}{"requestAfterSale", in.OrderSn, string(in.Type), in.Reason, lines})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Request opens an after-sale of the buyer's own order: the order PAID,
// (PARTIALLY_)SHIPPED, or COMPLETED within the window; each line's units
// held by a CAS that keeps the line's after-sale units at most what was
// bought. With a key, a repeat of the same input answers the same
// after-sale.
func (s *Service) Request(ctx context.Context, in RequestInput) (*AfterSale, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	var claim *checkout.IdempotencyClaim
	if in.IdempotencyKey != "" {
		c, done, err := s.orders.ClaimKey(ctx, in.UserID, in.IdempotencyKey, in.hash())
		if err != nil {
			return nil, err
		}
		if done != "" {
			return s.get(ctx, done)
		}
		claim = c
	}
	a, err := s.request(ctx, in, claim)
	if err != nil && claim != nil && !errors.Is(err, checkout.ErrIdempotencyInProgress) {
		s.orders.ReleaseKey(ctx, claim)
	}
	return a, err
}

// request opens the buyer's after-sale in of their own order.
func (s *Service) request(ctx context.Context, in RequestInput, claim *checkout.IdempotencyClaim) (*AfterSale, error) {
	o, err := s.orders.Order(ctx, "", true, in.OrderSn)
	if err != nil {
		return nil, err
	}
	if o == nil {
		return nil, fmt.Errorf("%w: no order %s", ErrNotFound, in.OrderSn)
	}
	if o.UserID != in.UserID {
		return nil, fmt.Errorf("%w: order %s is not yours", errs.Forbidden, in.OrderSn)
	}
	a, _, err := s.hold(ctx, o, in, claim, nil)
	return a, err
}

// hold opens after-sale in of order o, as read by the caller, in one
// transaction: each line's units held by checkout's CAS, the shipping fee
// when it goes back too. whole is refundOrder's, by that admin: the order
// must be PAID and every unit held one that has not shipped, both decided
// inside the transaction (checkout.LockPaidTx, checkout.HoldUnshipped),
// and the after-sale is approved and on to REFUNDING in it, its refund
// written; hold reports that refund's number, to send once committed.
func (s *Service) hold(ctx context.Context, o *checkout.Order, in RequestInput, claim *checkout.IdempotencyClaim, whole *Actor) (*AfterSale, string, error) {
	now := s.now()
	if err := s.open(o, now); err != nil {
		return nil, "", err
	}
	byItem := map[int64]*checkout.OrderLine{}
	for _, l := range o.Lines {
		byItem[l.ItemID] = l
	}
	asked := slices.SortedFunc(slices.Values(in.Lines), func(a, b LineInput) int { return cmp.Compare(a.ItemID, b.ItemID) })
	for _, l := range asked {
		ol := byItem[l.ItemID]
		if ol == nil {
			return nil, "", fmt.Errorf("%w: order %s has no line of SKU %d", ErrInvalidInput, in.OrderSn, l.ItemID)
		}
		if l.Quantity > ol.Quantity {
			return nil, "", fmt.Errorf("%w: SKU %d: %d bought; %d asked", checkout.ErrAfterSaleQuantity, l.ItemID, ol.Quantity, l.Quantity)
		}
		if in.Type == enums.AfterSaleReturnAndRefund && l.Quantity > ol.ShippedQuantity {
			return nil, "", fmt.Errorf("%w: SKU %d: %d shipped; only shipped units can be sent back (%d asked)", ErrInvalidInput, l.ItemID, ol.ShippedQuantity, l.Quantity)
		}
	}
	var a *AfterSale
	var no string
	hold := checkout.HoldReturn
	switch {
	case whole != nil && !unguardedWhole:
		hold = checkout.HoldUnshipped
	case in.Type == enums.AfterSaleRefundOnly:
		hold = checkout.HoldRefund
	}
	err := store.WithTx(ctx, s.db, func(ctx context.Context, tx *ent.Tx) error {
		no = ""
		var p payments.Paying
		if whole != nil {
			// The lock order of every refund: the paying payment, then the order.
			var err error
			if p, err = s.refunds.PayingTx(ctx, tx, o); err != nil {
				return err
			}
			if !unguardedWhole {
				if err := checkout.LockPaidTx(ctx, tx, o.ID); err != nil {
					return err
				}
			}
		}
		if err := lockForFee(ctx, tx, o, in.Type); err != nil {
			return err
		}
		a = &AfterSale{Sn: newSn(now), OrderSn: o.OrderSn, UserID: o.UserID, Type: in.Type, Status: enums.AfterSaleRequested,
			Currency: o.Currency, Reason: in.Reason, CreatedAt: now, UpdatedAt: now, orderID: o.ID, whole: whole != nil}
		for _, l := range asked {
			ol := byItem[l.ItemID]
			h, err := checkout.HoldLineTx(ctx, tx, ol.LineID(), l.Quantity, hold)
			if err != nil {
				return err
			}
			a.Lines = append(a.Lines, &Line{ItemID: l.ItemID, Quantity: l.Quantity, Amount: h.Amount,
				orderLineID: ol.LineID(), goodsID: ol.GoodsID, poolID: ol.PoolID, withheld: h.Withheld})
			a.Amount += h.Amount
		}
		fee, err := feeBack(ctx, tx, o, in.Type)
		if err != nil {
			return err
		}
		a.ShippingFee = fee
		a.Amount += fee
		if err := insert(ctx, tx, a); err != nil {
			return err
		}
		if err := logTx(ctx, tx, a.id, in.UserID, "", enums.AfterSaleRequested, in.Reason, now); err != nil {
			return err
		}
		if claim != nil {
			if err := checkout.FinishKeyTx(ctx, tx, claim, a.Sn); err != nil {
				return err
			}
		}
		if err := checkout.Emit(ctx, tx, EventAfterSaleRequested, a.OrderSn, payloadOf(a), now); err != nil {
			return err
		}
		if whole == nil {
			return nil
		}
		// An admin's refund of the whole order is approved as it is asked.
		if _, err := move(ctx, tx, a.id, enums.AfterSaleRequested, enums.AfterSaleApproved, whole.ID, "", now, nil); err != nil {
			return err
		}
		_, n, err := s.toRefunding(ctx, tx, a, p, enums.AfterSaleApproved, whole.ID, "", now)
		no, a.Status = n, enums.AfterSaleRefunding
		return err
	})
	if err != nil {
		return nil, "", store.Classify(err)
	}
	return a, no, nil
}

// open refuses an order whose money cannot come back by an after-sale:
// unpaid, closed, refunded, or completed longer ago than the window.
func (s *Service) open(o *checkout.Order, now time.Time) error {
	switch o.Status {
	case enums.OrderPaid, enums.OrderPartiallyShipped, enums.OrderShipped:
		return nil
	case enums.OrderCompleted:
		if o.CompletedAt != nil && now.After(o.CompletedAt.Add(s.cfg.Window)) {
			return fmt.Errorf("%w: order %s completed at %s; after-sales closed %s after", ErrInvalidState, o.OrderSn,
				o.CompletedAt.UTC().Format(time.RFC3339), s.cfg.Window)
		}
		return nil
	}
	return fmt.Errorf("%w: order %s is %s; after-sales are for PAID, shipped or completed orders", ErrInvalidState, o.OrderSn, o.Status)
}

// lockForFee takes every line of the order, in the order requests hold
// them (by SKU), before a refund-only request of an order with a shipping
// fee holds any: feeBack
// then reads the other lines as the last request that held them left
// them. Without it two requests racing for an unshipped order's last
// units each read the other's line before its hold, and neither gave the
// fee back. Other requests need no lock: they never give a fee back.
func lockForFee(ctx context.Context, tx *ent.Tx, o *checkout.Order, t enums.AfterSaleType) error {
	if t != enums.AfterSaleRefundOnly || o.ShippingFee == 0 {
		return nil
	}
	_, err := tx.OrderLine.Query().Where(orderline.OrderID(o.ID)).Order(orderline.ByItemID(), orderline.ByID()).
		Modify(store.UpdateLock).IDs(ctx)
	if err != nil {
		return fmt.Errorf("locking the lines of order %s: %w", o.OrderSn, err)
	}
	return nil
}

// feeBack is the shipping fee a refund-only request gives back: all of it
// when, with this request, every unit of the order is refunded unshipped
// (withheld units never ship, so nothing can ship after), else nothing.
// The lines are read after this transaction's holds, and lockForFee held
// them all from the transaction's start: what it reads is the latest.
func feeBack(ctx context.Context, tx *ent.Tx, o *checkout.Order, t enums.AfterSaleType) (money.Money, error) {
	if t != enums.AfterSaleRefundOnly || o.ShippingFee == 0 {
		return 0, nil
	}
	// By the foreign key: an edge query from a bare &ent.Order{ID} has no
	// driver and panicked (every refund only of an order with a fee).
	lines, err := tx.OrderLine.Query().Where(orderline.OrderID(o.ID)).All(ctx)
	if err != nil {
		return 0, err
	}
	for _, l := range lines {
		if l.WithheldQuantity != l.Quantity {
			return 0, nil
		}
	}
	return o.ShippingFee, nil
}

// insert writes a new after-sale and its lines.
func insert(ctx context.Context, tx *ent.Tx, a *AfterSale) error {
	row, err := tx.AfterSale.Create().SetAfterSaleSn(a.Sn).SetOrderID(a.orderID).SetOrderSn(a.OrderSn).SetUserID(a.UserID).
		SetType(a.Type).SetStatus(a.Status).SetAmount(a.Amount).SetShippingFee(a.ShippingFee).SetCurrency(a.Currency).
		SetReason(a.Reason).SetWhole(a.whole).SetCreatedAt(a.CreatedAt).SetUpdatedAt(a.UpdatedAt).Save(ctx)
	if err != nil {
		return fmt.Errorf("writing after-sale %s: %w", a.Sn, err)
	}
	a.id = row.ID
	bulk := make([]*ent.AfterSaleLineCreate, len(a.Lines))
	for i, l := range a.Lines {
		bulk[i] = tx.AfterSaleLine.Create().SetAfterSaleID(row.ID).SetOrderLineID(l.orderLineID).SetItemID(l.ItemID).
			SetGoodsID(l.goodsID).SetPoolID(l.poolID).SetQuantity(l.Quantity).SetWithheld(l.withheld).SetAmount(l.Amount)
	}
	if err := tx.AfterSaleLine.CreateBulk(bulk...).Exec(ctx); err != nil {
		return fmt.Errorf("writing the lines of after-sale %s: %w", a.Sn, err)
	}
	return nil
}

// get reads after-sale sn with its lines.
func (s *Service) get(ctx context.Context, sn string) (*AfterSale, error) {
	r, err := s.db.Client.AfterSale.Query().Where(aftersale.AfterSaleSn(sn)).WithLines().Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no after-sale %s", ErrNotFound, sn)
	}
	if err != nil {
		return nil, store.Classify(err)
	}
	return toAfterSale(r), nil
}
