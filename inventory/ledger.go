// Package inventory owns stock: every change is a ledger row (stock_log) with
// a unique business key, and sku.stock is only the balance of those rows.
package inventory

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/store"
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
// a business key fails with a unique-key violation (store.IsDuplicate): the
// caller decides whether that means "already done".
func Book(ctx context.Context, tx *ent.Tx, entries ...Entry) error {
	// Chunks keep each statement well under SQLite's and MySQL's placeholder limits.
	for start := 0; start < len(entries); start += 500 {
		ins := store.NewInsert(stocklog.Table)
		for _, e := range entries[start:min(start+500, len(entries))] {
			m := Movement{ItemID: e.ItemID, GoodsID: e.GoodsID, Num: e.Num, Type: e.Type, BizType: e.BizType, BizSn: e.BizSn, Remark: e.Remark}
			ins.Row(func(v store.Values) { m.write(v, itoa(e.Before), itoa(e.After)) })
		}
		if err := store.Exec(ctx, tx, ins); err != nil {
			return fmt.Errorf("booking %d ledger rows: %w", ins.Len(), err)
		}
	}
	return nil
}
