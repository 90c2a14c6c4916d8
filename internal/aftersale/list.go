package aftersale

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent/aftersale"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
	"storefront/internal/vocab/paging"
)

const cursorKind = "aftersale"

// Page is one page of after-sales, newest first.
type Page struct {
	AfterSales  []*AfterSale
	HasNextPage bool
}

// Cursor is the opaque connection cursor of an after-sale.
func Cursor(a *AfterSale) string { return paging.Cursor(cursorKind, a.id) }

// List pages through every after-sale (admins' queue), newest first,
// those in status only when it is given (the (status, id) index).
func (s *Service) List(ctx context.Context, first int, after string, status *enums.AfterSaleStatus) (*Page, error) {
	first, below, err := paging.Window(cursorKind, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	q := s.db.Client.AfterSale.Query().WithLines()
	if status != nil {
		q = q.Where(aftersale.StatusEQ(*status))
	}
	if below != 0 {
		q = q.Where(aftersale.IDLT(below))
	}
	rows, err := q.Order(aftersale.ByID(entsql.OrderDesc())).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	p := &Page{}
	rows, p.HasNextPage = paging.Trim(rows, first)
	for _, r := range rows {
		p.AfterSales = append(p.AfterSales, toAfterSale(r))
	}
	return p, nil
}

// OfOrder is the after-sales of order orderID, oldest first (the caller
// has checked the order is the reader's).
func (s *Service) OfOrder(ctx context.Context, orderID int64) ([]*AfterSale, error) {
	rows, err := s.db.Client.AfterSale.Query().Where(aftersale.OrderID(orderID)).WithLines().Order(aftersale.ByID()).All(ctx)
	if err != nil {
		return nil, store.Classify(err)
	}
	out := make([]*AfterSale, len(rows))
	for i, r := range rows {
		out[i] = toAfterSale(r)
	}
	return out, nil
}

// Get is after-sale sn for actor (a buyer's own, any for an admin).
func (s *Service) Get(ctx context.Context, actor Actor, sn string) (*AfterSale, error) {
	return s.find(ctx, sn, actor)
}
