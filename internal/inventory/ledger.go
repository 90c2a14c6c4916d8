// Package inventory owns stock: every change is a ledger row (stock_log) with
// a unique business key, and sku.stock is only the balance of those rows.
package inventory

import (
	"context"
	"fmt"
	"strings"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/platform/store"
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
	ToPool        ChangeType = 7 // moved to a stock pool: -n on main stock, +n on the pool
	FromPool      ChangeType = 8 // returned from a pool: -n on the pool, +n on main stock
)

// Business types of ledger rows (biz_type).
const (
	BizOpening = "opening"
	BizManual  = "manual"
	BizOrder   = "order"
	BizCount   = "stocktake"
	BizPool    = "pool" // biz number: the pool's id
	// BizAfterSale: an after-sale's restores (change type 4), biz number
	// the after-sale's number (internal/aftersale).
	BizAfterSale = "after_sale"
)

// Entry is one ledger row.
type Entry struct {
	ItemID, GoodsID        int64
	Type                   ChangeType
	Num, Before, After     int64
	BizType, BizSn, Remark string
	PoolID                 int64 // 0: main stock
}

// Book writes ledger rows inside the caller's transaction. A row that repeats
// a business key fails with a unique-key violation (store.IsDuplicate): the
// caller decides whether that means "already done".
func Book(ctx context.Context, tx *ent.Tx, entries ...Entry) error {
	// Chunks keep each statement well under SQLite's and MySQL's placeholder limits.
	for start := 0; start < len(entries); start += 500 {
		ins := store.NewInsert(stocklog.Table)
		for _, e := range entries[start:min(start+500, len(entries))] {
			m := Movement{ItemID: e.ItemID, GoodsID: e.GoodsID, Num: e.Num, Type: e.Type, BizType: e.BizType, BizSn: e.BizSn, Remark: e.Remark, PoolID: e.PoolID}
			ins.Row(func(v store.Values) { m.write(v, itoa(e.Before), itoa(e.After)) })
		}
		if err := store.Exec(ctx, tx, ins); err != nil {
			return fmt.Errorf("booking %d ledger rows: %w", ins.Len(), err)
		}
	}
	return nil
}

// Opening is the stock a new SKU starts with.
type Opening struct{ ItemID, GoodsID, Num int64 }

// Open gives new SKUs (created with stock 0 in this transaction) their
// opening stock, with one ledger row each (change type 5, biz "opening",
// biz number "sku-<id>"), so the ledger sums to stock from the very first
// row (seed 003, 7.4). One UPDATE per chunk of SKUs: a 500-SKU goods is
// created in a few statements, not 500.
func Open(ctx context.Context, tx *ent.Tx, openings []Opening) error {
	const chunk = 200
	var moving []Opening // a SKU opened at 0 has its row, and no change
	for _, o := range openings {
		if o.Num != 0 {
			moving = append(moving, o)
		}
	}
	for start := 0; start < len(moving); start += chunk {
		part := moving[start:min(start+chunk, len(moving))]
		var set, in strings.Builder
		args := make([]any, 0, 3*len(part))
		for i, o := range part {
			set.WriteString(" WHEN ? THEN ?")
			args = append(args, o.ItemID, o.Num)
			if i > 0 {
				in.WriteString(", ")
			}
			in.WriteString("?")
		}
		for _, o := range part {
			args = append(args, o.ItemID)
		}
		res, err := tx.ExecContext(ctx, "UPDATE sku SET stock = stock + CASE id"+set.String()+" END WHERE stock = 0 AND id IN ("+in.String()+")", args...)
		if err != nil {
			return fmt.Errorf("opening the stock of %d SKUs: %w", len(part), err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n != int64(len(part)) {
			return fmt.Errorf("opening the stock of %d SKUs: only %d of them are new with no stock", len(part), n)
		}
	}
	entries := make([]Entry, len(openings))
	for i, o := range openings {
		entries[i] = Entry{ItemID: o.ItemID, GoodsID: o.GoodsID, Type: Adjust, Num: o.Num, Before: 0, After: o.Num,
			BizType: BizOpening, BizSn: fmt.Sprintf("sku-%d", o.ItemID), Remark: "opening stock"}
	}
	return Book(ctx, tx, entries...)
}
