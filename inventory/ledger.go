// Package inventory owns stock: every change is a ledger row (stock_log) with
// a unique business key, and sku.stock is only the balance of those rows.
package inventory

import (
	"context"
	"fmt"

	"storefront/ent"
)

// ChangeType keeps the seed's integer codes; they are stored and shown as is.
type ChangeType int8

const (
	OrderDeduct   ChangeType = 1
	PaymentDeduct ChangeType = 2
	CloseRestore  ChangeType = 3 // cancel or timeout close
	RefundRestore ChangeType = 4
	Adjust        ChangeType = 5 // admin adjustment and opening stock
	Stocktake     ChangeType = 6
)

// Business types of ledger rows (biz_type).
const (
	BizOpening = "opening"
	BizManual  = "manual"
	BizOrder   = "order"
	BizRefund  = "refund"
	BizCount   = "stocktake"
)

// Entry is one ledger row.
type Entry struct {
	ItemID, GoodsID        int64
	Type                   ChangeType
	Num, Before, After     int64
	BizType, BizSn, Remark string
}

// Book writes ledger rows inside the caller's transaction. A row that repeats
// a business key fails with a constraint error: the caller decides whether
// that means "already done".
func Book(ctx context.Context, tx *ent.Tx, entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	builders := make([]*ent.StockLogCreate, len(entries))
	for i, e := range entries {
		builders[i] = tx.StockLog.Create().
			SetItemID(e.ItemID).SetGoodsID(e.GoodsID).SetChangeType(int8(e.Type)).
			SetChangeNum(e.Num).SetBeforeStock(e.Before).SetAfterStock(e.After).
			SetBizType(e.BizType).SetBizSn(e.BizSn).SetRemark(e.Remark)
	}
	// Chunks keep each statement well under SQLite's and MySQL's placeholder limits.
	for start := 0; start < len(builders); start += 500 {
		end := min(start+500, len(builders))
		if err := tx.StockLog.CreateBulk(builders[start:end]...).Exec(ctx); err != nil {
			return fmt.Errorf("booking %d ledger rows: %w", end-start, err)
		}
	}
	return nil
}
