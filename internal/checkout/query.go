package checkout

import (
	"context"
	"errors"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/order"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/paging"
)

func toOrder(r *ent.Order) *Order {
	o := &Order{
		ID: r.ID, OrderSn: r.OrderSn, UserID: r.UserID, Status: r.Status, Amount: r.Amount,
		Subtotal: r.Subtotal, Discount: r.Discount,
		Currency: r.Currency, Remark: r.Remark, NeedsReview: r.NeedsReview,
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
		ShippingFee: r.ShippingFee, ShippingAddress: addressOf(r.ShippingAddress), ShippedAt: r.ShippedAt, CompletedAt: r.CompletedAt,
		RefundedAmount: r.RefundedAmount, ClosedAt: r.ClosedAt,
		version: r.Version,
	}
	if r.UserCouponID != nil {
		o.UserCouponID = *r.UserCouponID
	}
	o.Adjustments = adjustmentsOf(r.Edges.Adjustments)
	if r.PaidPaymentID != nil {
		o.PaidPaymentID = *r.PaidPaymentID
	}
	o.Lines = make([]*OrderLine, len(r.Edges.Lines))
	for i, l := range r.Edges.Lines {
		o.Lines[i] = &OrderLine{ItemID: l.ItemID, GoodsID: l.GoodsID, GoodsName: l.GoodsName,
			SpecValueStr: l.SpecValueStr, UnitPrice: l.UnitPrice, Quantity: l.Quantity, StockMode: l.StockMode, PoolID: l.PoolID,
			Discount: l.Discount, ShippedQuantity: l.ShippedQuantity, AfterSaleQuantity: l.AfterSaleQuantity,
			WithheldQuantity: l.WithheldQuantity, id: l.ID, lockState: enums.LockState(l.LockState), counted: l.PurchaseCounted}
	}
	return o
}

func withLines(q *ent.OrderLineQuery) { q.Order(ent.Asc("item_id")) }

func withAdjustments(q *ent.OrderAdjustmentQuery) { q.Order(ent.Asc("id")) }

// load returns the order with its lines, or ErrNotFound.
func (s *Service) load(ctx context.Context, orderSn string) (*Order, error) {
	r, err := s.db.Client.Order.Query().Where(order.OrderSn(orderSn)).WithLines(withLines).WithAdjustments(withAdjustments).Only(ctx)
	if ent.IsNotFound(err) {
		return nil, fmt.Errorf("%w: no order %s", ErrNotFound, orderSn)
	}
	if err != nil {
		return nil, store.Classify(fmt.Errorf("loading order %s: %w", orderSn, err))
	}
	return toOrder(r), nil
}

// Order returns an order of userID (any order for an admin), nil when it does
// not exist or is someone else's.
func (s *Service) Order(ctx context.Context, userID string, admin bool, orderSn string) (*Order, error) {
	o, err := s.load(ctx, orderSn)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		return nil, err
	}
	if !admin && o.UserID != userID {
		return nil, nil
	}
	return o, nil
}

// OrderPage is one page of a user's orders, newest first.
type OrderPage struct {
	Orders      []*Order
	HasNextPage bool
}

// MyOrders pages through userID's orders, newest first (id order, stable
// under inserts).
func (s *Service) MyOrders(ctx context.Context, userID string, first int, after string) (*OrderPage, error) {
	first, below, err := paging.Window(cursorKind, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	q := s.db.Client.Order.Query().Where(order.UserID(userID))
	if below != 0 {
		q = q.Where(order.IDLT(below))
	}
	rows, err := q.Order(order.ByID(sql.OrderDesc())).Limit(first + 1).WithLines(withLines).WithAdjustments(withAdjustments).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("listing orders: %w", err))
	}
	p := &OrderPage{}
	rows, p.HasNextPage = paging.Trim(rows, first)
	for _, r := range rows {
		p.Orders = append(p.Orders, toOrder(r))
	}
	return p, nil
}

// Cursor is the opaque connection cursor of an order.
func Cursor(id int64) string { return paging.Cursor(cursorKind, id) }

const cursorKind = "order"
