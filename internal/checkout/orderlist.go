package checkout

import (
	"context"
	"fmt"
	"slices"
	"time"

	"entgo.io/ent/dialect/sql"

	"storefront/ent/order"
	"storefront/ent/predicate"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/paging"
)

// The admin order list: every order, newest first (descending
// id, as myOrders), filtered, with its count. Each filter is a range of an
// index of orders (docs/shipping.md, "The order list"):
//
//	orderSn                     order_sn (unique): at most one row
//	userId                      (user_id, id): the user's orders in list order
//	status (one or several)     (status, id): each status's rows in list order
//	createdAfter, createdBefore created_at: the window's rows
//	none                        the primary key, read backwards
//
// Combined filters read the most selective of them (the database's
// planner chooses) and check the others on the rows it finds.

// OrderFilter narrows the admin order list; zero fields do not filter.
// CreatedAfter is inclusive, CreatedBefore exclusive.
type OrderFilter struct {
	Statuses      []enums.OrderStatus
	OrderSn       string
	UserID        string
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
}

// where is the filter as predicates.
func (f OrderFilter) where() []predicate.Order {
	var p []predicate.Order
	if len(f.Statuses) > 0 {
		st := slices.Compact(slices.Sorted(slices.Values(f.Statuses)))
		p = append(p, order.StatusIn(st...))
	}
	if f.OrderSn != "" {
		p = append(p, order.OrderSn(f.OrderSn))
	}
	if f.UserID != "" {
		p = append(p, order.UserID(f.UserID))
	}
	if f.CreatedAfter != nil {
		p = append(p, order.CreatedAtGTE(*f.CreatedAfter))
	}
	if f.CreatedBefore != nil {
		p = append(p, order.CreatedAtLT(*f.CreatedBefore))
	}
	return p
}

// Orders is one page of the orders f matches, newest first, and with count
// how many match in all (-1 without). A cursor is valid with any filter: it
// is the id the next page's rows lie below.
func (s *Service) Orders(ctx context.Context, f OrderFilter, first int, after string, count bool) (*OrderPage, int, error) {
	for _, st := range f.Statuses {
		if !slices.Contains(st.Values(), string(st)) {
			return nil, 0, fmt.Errorf("%w: status %q", ErrInvalidInput, st)
		}
	}
	first, below, err := paging.Window(cursorKind, first, after)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	where := f.where()
	total := -1
	if count {
		if total, err = s.db.Client.Order.Query().Where(where...).Count(ctx); err != nil {
			return nil, 0, store.Classify(fmt.Errorf("counting orders: %w", err))
		}
	}
	p := &OrderPage{}
	if first == 0 {
		return p, total, nil
	}
	q := s.db.Client.Order.Query().Where(where...)
	if below != 0 {
		q = q.Where(order.IDLT(below))
	}
	rows, err := q.Order(order.ByID(sql.OrderDesc())).Limit(first + 1).WithLines(withLines).WithAdjustments(withAdjustments).All(ctx)
	if err != nil {
		return nil, 0, store.Classify(fmt.Errorf("listing orders: %w", err))
	}
	rows, p.HasNextPage = paging.Trim(rows, first)
	for _, r := range rows {
		p.Orders = append(p.Orders, toOrder(r))
	}
	return p, total, nil
}
