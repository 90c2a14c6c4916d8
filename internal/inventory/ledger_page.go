package inventory

import (
	"context"
	"fmt"

	"entgo.io/ent/dialect/sql"

	"storefront/ent/sku"
	"storefront/ent/stocklog"
	"storefront/internal/platform/store"
	"storefront/internal/vocab/paging"
)

// MaxPageSize caps `first` on the ledger connection.
const MaxPageSize = paging.Max

// LedgerPage is one page of a SKU's ledger, newest first.
type LedgerPage struct {
	Rows        []*LedgerRow
	HasNextPage bool
}

// Ledger pages through one SKU's ledger rows, newest first. Ids grow with
// time, so paging by id is stable while new rows are booked.
func (s *Service) Ledger(ctx context.Context, itemID int64, first int, after string) (*LedgerPage, error) {
	first, below, err := paging.Window(cursorKind, first, after)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	q := s.db.Client.StockLog.Query().Where(stocklog.ItemID(itemID))
	if below != 0 {
		q = q.Where(stocklog.IDLT(below))
	}
	rows, err := q.Order(stocklog.ByID(sql.OrderDesc())).Limit(first + 1).All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("reading the ledger of SKU %d: %w", itemID, err))
	}
	if len(rows) == 0 {
		if err := s.skuExists(ctx, itemID); err != nil {
			return nil, err
		}
	}
	p := &LedgerPage{}
	rows, p.HasNextPage = paging.Trim(rows, first)
	p.Rows = make([]*LedgerRow, len(rows))
	for i, r := range rows {
		p.Rows[i] = &LedgerRow{
			ID: r.ID, ItemID: r.ItemID, GoodsID: r.GoodsID, ChangeType: int64(r.ChangeType), ChangeNum: r.ChangeNum,
			BeforeStock: r.BeforeStock, AfterStock: r.AfterStock, BizType: r.BizType, BizSn: r.BizSn,
			Remark: r.Remark, CreatedAt: r.CreatedAt, PoolID: r.PoolID,
		}
	}
	return p, nil
}

// Cursor is the opaque connection cursor of a row.
func Cursor(id int64) string { return paging.Cursor(cursorKind, id) }

const cursorKind = "stocklog"

// skuExists is nil when SKU itemID exists, else ErrNotFound: an empty page
// of a SKU that does not exist is a typo, not "no history".
func (s *Service) skuExists(ctx context.Context, itemID int64) error {
	ok, err := s.db.Client.Sku.Query().Where(sku.ID(itemID)).Exist(ctx)
	if err != nil {
		return store.Classify(err)
	}
	if !ok {
		return fmt.Errorf("%w: SKU %d", ErrNotFound, itemID)
	}
	return nil
}
