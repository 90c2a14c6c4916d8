// Package enums holds the string enums shared by the database schema (ent),
// the GraphQL contract and the domain packages, so one name means one thing
// from the column to the wire. It is a leaf package: ent imports it.
package enums

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
)

// GoodsStatus is the seed's -1 recycled / 0 off shelf / 1 on shelf.
type GoodsStatus string

const (
	GoodsRecycled GoodsStatus = "RECYCLED"
	GoodsOffShelf GoodsStatus = "OFF_SHELF"
	GoodsOnShelf  GoodsStatus = "ON_SHELF"
)

// SpecType is the seed's 0 single spec / 1 multi spec.
type SpecType string

const (
	SpecSingle SpecType = "SINGLE"
	SpecMulti  SpecType = "MULTI"
)

// SkuStatus is the seed's 1 enabled / 0 disabled. SKUs are disabled, never deleted.
type SkuStatus string

const (
	SkuEnabled  SkuStatus = "ENABLED"
	SkuDisabled SkuStatus = "DISABLED"
)

// OrderStatus is the order state machine: UNPAID → PAID → REFUNDED, or
// UNPAID → CLOSED (cancel, timeout), and a paid order's shipping: PAID →
// PARTIALLY_SHIPPED → SHIPPED → COMPLETED (docs/checkout.md). Every
// transition is a CAS on the old state.
type OrderStatus string

const (
	OrderUnpaid   OrderStatus = "UNPAID"
	OrderPaid     OrderStatus = "PAID"
	OrderClosed   OrderStatus = "CLOSED"
	OrderRefunded OrderStatus = "REFUNDED"
	// Shipping: some lines shipped, every line shipped, receipt
	// confirmed (by the buyer or the closer after --auto-confirm-after).
	OrderPartiallyShipped OrderStatus = "PARTIALLY_SHIPPED"
	OrderShipped          OrderStatus = "SHIPPED"
	OrderCompleted        OrderStatus = "COMPLETED"
)

// PaymentStatus merges redirects and notifications; PAID is never downgraded.
type PaymentStatus string

const (
	PaymentPending  PaymentStatus = "PENDING"
	PaymentPaid     PaymentStatus = "PAID"
	PaymentRefunded PaymentStatus = "REFUNDED"
	PaymentFailed   PaymentStatus = "FAILED"
)

// RefundStatus is a refund at a provider: PENDING from its first send
// until the provider confirms (SUCCEEDED) or refuses (FAILED) it.
type RefundStatus string

const (
	RefundPending   RefundStatus = "PENDING"
	RefundSucceeded RefundStatus = "SUCCEEDED"
	RefundFailed    RefundStatus = "FAILED"
)

func (RefundStatus) Values() []string            { return []string{"PENDING", "SUCCEEDED", "FAILED"} }
func (e RefundStatus) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *RefundStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// StockMode is when a goods' stock is taken (seed 003, 5.1–5.2): at order
// (restored if the order closes unpaid), or locked at order and deducted at
// payment. Every order line records the mode it was placed under.
type StockMode string

const (
	DeductAtOrder StockMode = "DEDUCT_AT_ORDER"
	LockAtOrder   StockMode = "LOCK_AT_ORDER"
)

// LockState is where a lock-at-order line's units are: LOCKED while the
// order is unpaid, then DEDUCTED (paid) or RELEASED (closed); "" for a
// deduct-at-order line. Each line leaves LOCKED once, by CAS: the per-line
// key that keeps a lock from being released or deducted twice.
type LockState string

const (
	LockNone     LockState = ""
	LockHeld     LockState = "LOCKED"
	LockDeducted LockState = "DEDUCTED"
	LockReleased LockState = "RELEASED"
)

func (StockMode) Values() []string { return []string{"DEDUCT_AT_ORDER", "LOCK_AT_ORDER"} }

func (e StockMode) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *StockMode) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// Values of OrderStatus: the shipping states last, so that MySQL's ENUM
// column gains them at its end (an in-place ALTER, no table copy).
func (OrderStatus) Values() []string {
	return []string{"UNPAID", "PAID", "CLOSED", "REFUNDED", "PARTIALLY_SHIPPED", "SHIPPED", "COMPLETED"}
}
func (PaymentStatus) Values() []string { return []string{"PENDING", "PAID", "REFUNDED", "FAILED"} }

func (e OrderStatus) MarshalGQL(w io.Writer)   { writeQuoted(w, string(e)) }
func (e PaymentStatus) MarshalGQL(w io.Writer) { writeQuoted(w, string(e)) }

func (e *OrderStatus) UnmarshalGQL(v any) error   { return unmarshal(v, e) }
func (e *PaymentStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

func (GoodsStatus) Values() []string { return []string{"RECYCLED", "OFF_SHELF", "ON_SHELF"} }
func (SpecType) Values() []string    { return []string{"SINGLE", "MULTI"} }
func (SkuStatus) Values() []string   { return []string{"ENABLED", "DISABLED"} }

func (e GoodsStatus) MarshalGQL(w io.Writer) { writeQuoted(w, string(e)) }
func (e SpecType) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e SkuStatus) MarshalGQL(w io.Writer)   { writeQuoted(w, string(e)) }

func (e *GoodsStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }
func (e *SpecType) UnmarshalGQL(v any) error    { return unmarshal(v, e) }
func (e *SkuStatus) UnmarshalGQL(v any) error   { return unmarshal(v, e) }

// ErrInvalid reports a value outside an enum.
var ErrInvalid = errors.New("invalid enum value")

type enum interface {
	~string
	Values() []string
}

func unmarshal[E enum](v any, dst *E) error {
	s, ok := v.(string)
	if !ok || !slices.Contains((*dst).Values(), s) {
		return fmt.Errorf("%w: %v is not a valid %T", ErrInvalid, v, *dst)
	}
	*dst = E(s)
	return nil
}

func writeQuoted(w io.Writer, s string) { _, _ = io.WriteString(w, strconv.Quote(s)) }

// StockPoolStatus is where a stock pool is in its window, computed from the
// clock and whether it was closed: SCHEDULED before starts_at, ACTIVE in
// [starts_at, ends_at) while not closed, ENDED after ends_at or once closed.
type StockPoolStatus string

const (
	PoolScheduled StockPoolStatus = "SCHEDULED"
	PoolActive    StockPoolStatus = "ACTIVE"
	PoolEnded     StockPoolStatus = "ENDED"
)

func (StockPoolStatus) Values() []string { return []string{"SCHEDULED", "ACTIVE", "ENDED"} }

func (e StockPoolStatus) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *StockPoolStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// CartStatus is OPEN until the cart's checkout places its order (CAS on
// OPEN), then COMPLETED for good.
type CartStatus string

const (
	CartOpen      CartStatus = "OPEN"
	CartCompleted CartStatus = "COMPLETED"
)

func (CartStatus) Values() []string { return []string{"OPEN", "COMPLETED"} }

func (e CartStatus) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *CartStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// CouponKind is how a coupon takes money off: a fixed amount, or a percent
// of the lines in its scope (capped by its maxDiscount).
type CouponKind string

const (
	CouponAmountOff  CouponKind = "AMOUNT_OFF"
	CouponPercentOff CouponKind = "PERCENT_OFF"
)

func (CouponKind) Values() []string { return []string{"AMOUNT_OFF", "PERCENT_OFF"} }

func (e CouponKind) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *CouponKind) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// UserCouponStatus is where a claimed coupon is: AVAILABLE to use, LOCKED
// by an unpaid order, USED by a paid one, EXPIRED past its validity. Every
// change is a CAS on the old status (internal/promo).
type UserCouponStatus string

const (
	CouponAvailable UserCouponStatus = "AVAILABLE"
	CouponLocked    UserCouponStatus = "LOCKED"
	CouponUsed      UserCouponStatus = "USED"
	CouponExpired   UserCouponStatus = "EXPIRED"
)

func (UserCouponStatus) Values() []string { return []string{"AVAILABLE", "LOCKED", "USED", "EXPIRED"} }

func (e UserCouponStatus) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *UserCouponStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// ChargeBy is what a freight template counts (seed 003's ls_freight):
// pieces, or grams of the SKUs' weightGrams.
type ChargeBy string

const (
	ChargeByPiece  ChargeBy = "PIECE"
	ChargeByWeight ChargeBy = "WEIGHT"
)

func (ChargeBy) Values() []string { return []string{"PIECE", "WEIGHT"} }

func (e ChargeBy) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *ChargeBy) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// AfterSaleType is what a buyer asks for: the money back and the
// goods kept, or the goods sent back and then the money.
type AfterSaleType string

const (
	AfterSaleRefundOnly      AfterSaleType = "REFUND_ONLY"
	AfterSaleReturnAndRefund AfterSaleType = "RETURN_AND_REFUND"
)

func (AfterSaleType) Values() []string            { return []string{"REFUND_ONLY", "RETURN_AND_REFUND"} }
func (e AfterSaleType) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *AfterSaleType) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// AfterSaleStatus is an after-sale's place in its state machine
// (internal/aftersale, docs/after-sales.md): REQUESTED → APPROVED |
// REJECTED | CANCELLED; APPROVED → REFUNDING (refund only) or →
// RETURN_SHIPPED → REFUNDING (a return); REFUNDING → REFUNDED. Every move
// is a CAS on the old status.
type AfterSaleStatus string

const (
	AfterSaleRequested     AfterSaleStatus = "REQUESTED"
	AfterSaleApproved      AfterSaleStatus = "APPROVED"
	AfterSaleRejected      AfterSaleStatus = "REJECTED"
	AfterSaleReturnShipped AfterSaleStatus = "RETURN_SHIPPED"
	AfterSaleRefunding     AfterSaleStatus = "REFUNDING"
	AfterSaleRefunded      AfterSaleStatus = "REFUNDED"
	AfterSaleCancelled     AfterSaleStatus = "CANCELLED"
)

func (AfterSaleStatus) Values() []string {
	return []string{"REQUESTED", "APPROVED", "REJECTED", "RETURN_SHIPPED", "REFUNDING", "REFUNDED", "CANCELLED"}
}
func (e AfterSaleStatus) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *AfterSaleStatus) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// MoneyEntryKind is a movement of money on the money ledger: a payment
// that paid its order (CHARGE), money back to the buyer (REFUND, negative),
// a payment the order did not need (EXTRA: another payment had paid it, or
// it came after the order closed), and a payment from the buyer's balance
// (BALANCE_PAYMENT).
type MoneyEntryKind string

const (
	MoneyCharge         MoneyEntryKind = "CHARGE"
	MoneyRefund         MoneyEntryKind = "REFUND"
	MoneyExtra          MoneyEntryKind = "EXTRA"
	MoneyBalancePayment MoneyEntryKind = "BALANCE_PAYMENT"
)

func (MoneyEntryKind) Values() []string {
	return []string{"CHARGE", "REFUND", "EXTRA", "BALANCE_PAYMENT"}
}
func (e MoneyEntryKind) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *MoneyEntryKind) UnmarshalGQL(v any) error { return unmarshal(v, e) }

// AdjustmentKind is what changes an order's amount besides its lines
// (API-CONVENTIONS.md, "Order money"): discounts (negative) and fees
// (positive). Each kind is defined once, in checkout's adjustment
// definitions; the quote, the rows, refunds and events treat them alike.
type AdjustmentKind string

const (
	AdjustCoupon    AdjustmentKind = "COUPON"
	AdjustPromotion AdjustmentKind = "PROMOTION"
	AdjustShipping  AdjustmentKind = "SHIPPING"
	AdjustPoints    AdjustmentKind = "POINTS"
	AdjustGroupBuy  AdjustmentKind = "GROUP_BUY"
	AdjustBargain   AdjustmentKind = "BARGAIN"
)

func (AdjustmentKind) Values() []string {
	return []string{"COUPON", "PROMOTION", "SHIPPING", "POINTS", "GROUP_BUY", "BARGAIN"}
}
func (e AdjustmentKind) MarshalGQL(w io.Writer)    { writeQuoted(w, string(e)) }
func (e *AdjustmentKind) UnmarshalGQL(v any) error { return unmarshal(v, e) }
