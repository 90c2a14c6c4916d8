package checkout

import (
	"context"
	"fmt"
	"slices"
	"time"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/ent/orderline"
	"storefront/ent/predicate"
	"storefront/internal/pricing"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/errs"
	"storefront/internal/vocab/money"
)

// After-sales (internal/aftersale) change an order's lines and
// money through these functions only, inside aftersale's transaction:
// checkout stays the one writer of orders and order_line. Each is a CAS
// that holds on the row as it is when it runs, never on a read before it.

// ErrAfterSaleQuantity: more units asked back than are left of a line.
var ErrAfterSaleQuantity = errs.New(errs.InvalidInput, "more units than are left of the line")

// LineHold is what an after-sale took of one order line.
type LineHold struct {
	Amount   money.Money // what its units refund (pricing.Refundable)
	Withheld int64       // of its units, those that had not shipped (a refund only)
}

// Hold is what an after-sale takes of a line's units.
type Hold int

const (
	// HoldRefund is a refund only: its units come from what has not
	// shipped first (those are withheld and never ship), then from shipped
	// ones the buyer keeps.
	HoldRefund Hold = iota
	// HoldReturn is a return: shipped units no other after-sale has.
	HoldReturn
	// HoldUnshipped is a refund of units that have not shipped (the whole
	// order's refundOrder): every unit held must be one that has not
	// shipped, by the same CAS, so a shipment at the same moment and the
	// refund cannot both take one unit.
	HoldUnshipped
)

// HoldLineTx adds k units of order line lineID to after-sales: a CAS keeps
// the line's after-sale units at most its quantity (so of many requests at
// once only those that fit stand), and for a return the shipped units no
// other after-sale has, for HoldUnshipped the units neither shipped nor
// withheld. The amount is decided on the row this transaction then holds:
// after its own UPDATE the row it reads is the latest (InnoDB shows a
// transaction its own change; PostgreSQL reads it per statement; SQLite
// has one writer).
func HoldLineTx(ctx context.Context, tx *ent.Tx, lineID, k int64, hold Hold) (LineHold, error) {
	fits := []predicate.OrderLine{orderline.ID(lineID), afterSaleFits(k)}
	switch hold {
	case HoldReturn:
		fits = append(fits, returnFits(k))
	case HoldUnshipped:
		fits = append(fits, shippedFits(k))
	}
	n, err := tx.OrderLine.Update().Where(fits...).AddAfterSaleQuantity(k).Save(ctx)
	if err != nil {
		return LineHold{}, fmt.Errorf("holding %d units of line %d: %w", k, lineID, err)
	}
	l, err := tx.OrderLine.Get(ctx, lineID)
	if err != nil {
		return LineHold{}, fmt.Errorf("reading line %d: %w", lineID, err)
	}
	if n == 0 {
		left := l.Quantity - l.AfterSaleQuantity
		switch {
		case k > left || hold == HoldRefund:
			return LineHold{}, fmt.Errorf("%w: SKU %d: %d bought, %d in after-sales, %d left; %d asked",
				ErrAfterSaleQuantity, l.ItemID, l.Quantity, l.AfterSaleQuantity, left, k)
		case hold == HoldUnshipped:
			return LineHold{}, fmt.Errorf("%w: SKU %d: %d of %d shipped; only units that have not shipped are refunded this way (%d asked)",
				ErrInvalidOrderState, l.ItemID, l.ShippedQuantity, l.Quantity, k)
		}
		return LineHold{}, fmt.Errorf("%w: SKU %d: %d shipped, %d of them already in after-sales; only shipped units can be sent back (%d asked)",
			ErrAfterSaleQuantity, l.ItemID, l.ShippedQuantity, l.AfterSaleQuantity-l.WithheldQuantity, k)
	}
	paid, err := linePaidTx(ctx, tx, l)
	if err != nil {
		return LineHold{}, err
	}
	h := LineHold{Amount: pricing.Refundable(paid, l.Quantity, l.AfterSaleQuantity-k, k, l.AfterSaleAmount)}
	switch hold {
	case HoldRefund:
		h.Withheld = max(0, min(k, l.Quantity-l.ShippedQuantity-l.WithheldQuantity))
	case HoldUnshipped:
		h.Withheld = k
	}
	if err := tx.OrderLine.UpdateOneID(lineID).AddAfterSaleAmount(h.Amount).AddWithheldQuantity(h.Withheld).Exec(ctx); err != nil {
		return LineHold{}, fmt.Errorf("holding the money of line %d: %w", lineID, err)
	}
	return h, nil
}

// LockPaidTx takes order orderID's row by a CAS that only a PAID order
// passes (nothing of it shipped, nothing refunded whole): the first write
// of a whole-order refund's transaction, as a shipment's first write is
// its own CAS on the row. Of the two, the one that runs second sees the
// first's result: a shipment finds the units withheld, the refund finds
// the order PARTIALLY_SHIPPED.
func LockPaidTx(ctx context.Context, tx *ent.Tx, orderID int64) error {
	n, err := tx.Order.Update().Where(order.ID(orderID), order.StatusEQ(enums.OrderPaid)).AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("locking order %d: %w", orderID, err)
	}
	if n == 0 {
		o, err := tx.Order.Query().Where(order.ID(orderID)).Select(order.FieldOrderSn, order.FieldStatus).Only(ctx)
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: order %s is %s, only PAID orders can be refunded whole", ErrInvalidOrderState, o.OrderSn, o.Status)
	}
	return nil
}

// ReleaseLineTx gives back what HoldLineTx took (a rejected or cancelled
// after-sale), by a CAS that never takes the line below zero.
func ReleaseLineTx(ctx context.Context, tx *ent.Tx, lineID, k int64, h LineHold) error {
	n, err := tx.OrderLine.Update().
		Where(orderline.ID(lineID), orderline.AfterSaleQuantityGTE(k), orderline.AfterSaleAmountGTE(h.Amount), orderline.WithheldQuantityGTE(h.Withheld)).
		AddAfterSaleQuantity(-k).AddAfterSaleAmount(-h.Amount).AddWithheldQuantity(-h.Withheld).Save(ctx)
	if err != nil {
		return fmt.Errorf("releasing %d units of line %d: %w", k, lineID, err)
	}
	if n == 0 {
		return fmt.Errorf("releasing %d units of line %d: fewer are held", k, lineID)
	}
	return nil
}

// afterSaleFits holds while k more units keep the line's after-sale units
// at most its quantity.
func afterSaleFits(k int64) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		s.Where(entsql.ExprP(s.C(orderline.FieldAfterSaleQuantity)+" + ? <= "+s.C(orderline.FieldQuantity), k))
	}
}

// returnFits holds while k more units sent back keep the line's after-sale
// units of shipped goods (all but the withheld ones) at most what shipped.
func returnFits(k int64) func(*entsql.Selector) {
	return func(s *entsql.Selector) {
		s.Where(entsql.ExprP(s.C(orderline.FieldAfterSaleQuantity)+" - "+s.C(orderline.FieldWithheldQuantity)+" + ? <= "+
			s.C(orderline.FieldShippedQuantity), k))
	}
}

// refundable are the statuses of an order whose money may go back.
var refundable = []enums.OrderStatus{enums.OrderPaid, enums.OrderPartiallyShipped, enums.OrderShipped, enums.OrderCompleted}

// paidOrders are the statuses of an order a payment paid: money another
// payment brings it is extra (PayTx flags it).
var paidOrders = append(slices.Clip(refundable), enums.OrderRefunded)

// ReserveRefundTx reserves amount of order orderID's money for a refund
// about to be sent: a CAS keeps the money of refunds sent or confirmed at
// most what was paid, in the transaction that moves the after-sale to
// REFUNDING, before anything is sent.
func ReserveRefundTx(ctx context.Context, tx *ent.Tx, orderID int64, amount money.Money) error {
	n, err := tx.Order.Update().Where(order.ID(orderID), order.StatusIn(refundable...), func(s *entsql.Selector) {
		s.Where(entsql.ExprP(s.C(order.FieldRefundReserved)+" + ? <= "+s.C(order.FieldAmount), int64(amount)))
	}).AddRefundReserved(amount).AddVersion(1).Save(ctx)
	if err != nil {
		return fmt.Errorf("reserving %s of order %d for a refund: %w", amount, orderID, err)
	}
	if n == 0 {
		o, err := tx.Order.Get(ctx, orderID)
		if err != nil {
			return err
		}
		return fmt.Errorf("%w: order %s is %s with %s of %s refunded or being refunded; %s more would pass what was paid",
			ErrInvalidOrderState, o.OrderSn, o.Status, o.RefundReserved, o.Amount, amount)
	}
	return nil
}

// ConfirmRefundTx books amount of order orderID as refunded (the provider
// confirmed it): a CAS keeps it at most the money reserved. When everything
// paid is refunded the order becomes REFUNDED, by a CAS of its own, and
// only its winner emits OrderRefunded and gives back the buyer's purchase
// counts; otherwise the order keeps its fulfilment status. It reports
// whether the order became REFUNDED.
func ConfirmRefundTx(ctx context.Context, tx *ent.Tx, orderID int64, amount money.Money, now time.Time) (bool, error) {
	n, err := tx.Order.Update().Where(order.ID(orderID), func(s *entsql.Selector) {
		s.Where(entsql.ExprP(s.C(order.FieldRefundedAmount)+" + ? <= "+s.C(order.FieldRefundReserved), int64(amount)))
	}).AddRefundedAmount(amount).AddVersion(1).Save(ctx)
	if err != nil {
		return false, fmt.Errorf("booking %s of order %d refunded: %w", amount, orderID, err)
	}
	if n == 0 {
		return false, fmt.Errorf("order %d: a refund of %s confirmed beyond the money reserved", orderID, amount)
	}
	n, err = tx.Order.Update().Where(order.ID(orderID), order.StatusIn(refundable...), func(s *entsql.Selector) {
		s.Where(entsql.ColumnsEQ(s.C(order.FieldRefundedAmount), s.C(order.FieldAmount)))
	}).SetStatus(enums.OrderRefunded).SetClosedAt(now).SetCloseReason(Refund.Reason).AddVersion(1).Save(ctx)
	if err != nil || n == 0 {
		return false, err
	}
	o, err := loadTx(ctx, tx, orderID)
	if err != nil {
		return false, err
	}
	if err := closePromo(ctx, tx, o, Refund, now); err != nil {
		return false, err
	}
	return true, emit(ctx, tx, EventOrderRefunded, o, "after-sale", now)
}
