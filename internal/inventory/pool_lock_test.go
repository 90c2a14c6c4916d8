package inventory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"storefront/ent"
	"storefront/ent/stocklog"
	"storefront/internal/inventory"
	"storefront/internal/platform/store"
	"storefront/internal/testsupport/testdb"
)

// The pool's lock: reconciliation finds a lock no order holds; a deduction
// or a release of more than is locked is refused (ErrLockDrift) and changes
// nothing; a release before the return books nothing; the return moves only
// the available remainder (stock - lock_stock); a release after it moves
// the units to main stock, change type 8 under the releasing document's key.
func TestPoolLock(t *testing.T) {
	testdb.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		inv := inventory.New(db)
		s := oneSku(t, db, 20)
		p, err := inv.MoveToPool(ctx, poolInput(s.ID, 10))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.SQL.Exec("UPDATE stock_pool SET lock_stock = 3 WHERE id = ?", p.ID); err != nil {
			t.Fatal(err)
		}
		diffs, err := inv.ReconcilePools(ctx, false)
		if err != nil || len(diffs) != 1 || diffs[0].LockedStock != 3 || diffs[0].LockedByOrders != 0 || !diffs[0].LockDrift() {
			t.Errorf("ReconcilePools with 3 locked by no order: %+v, %v; want the pool, locked 3 by 0", diffs, err)
		}
		line := func(n int64) inventory.RestoreLine {
			return inventory.RestoreLine{ItemID: s.ID, GoodsID: s.GoodsID, Num: n, PoolID: p.ID}
		}
		inTx := func(fn func(ctx context.Context, tx *ent.Tx) error) error {
			return store.WithTx(ctx, db, fn)
		}
		deduct4 := []inventory.Movement{{ItemID: s.ID, GoodsID: s.GoodsID, Num: -4, Type: inventory.PaymentDeduct, BizType: inventory.BizOrder, BizSn: "o-4", PoolID: p.ID}}
		if err := inTx(func(ctx context.Context, tx *ent.Tx) error { return inventory.DeductPool(ctx, tx, deduct4) }); !errors.Is(err, inventory.ErrLockDrift) {
			t.Errorf("deducting 4 with 3 locked: %v, want ErrLockDrift", err)
		}
		if err := inTx(func(ctx context.Context, tx *ent.Tx) error {
			return inventory.ReleasePool(ctx, tx, inventory.BizOrder, "o-4", line(4), time.Now())
		}); !errors.Is(err, inventory.ErrLockDrift) {
			t.Errorf("releasing 4 with 3 locked: %v, want ErrLockDrift", err)
		}
		rows0, _ := poolRows(t, db, p.ID)
		if err := inTx(func(ctx context.Context, tx *ent.Tx) error {
			return inventory.ReleasePool(ctx, tx, inventory.BizOrder, "o-2", line(2), time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		got, _ := inv.Pool(ctx, p.ID)
		if rows, _ := poolRows(t, db, p.ID); got.Stock != 10 || got.LockedStock != 1 || len(rows) != len(rows0) {
			t.Errorf("after releasing 2 before the return: stock %d, locked %d, %d new rows; want 10, 1, 0", got.Stock, got.LockedStock, len(rows)-len(rows0))
		}

		if _, err := inv.ClosePool(ctx, p.ID); err != nil {
			t.Fatal(err)
		}
		got, _ = inv.Pool(ctx, p.ID)
		rows, sum := poolRows(t, db, p.ID)
		last := rows[len(rows)-1]
		if got.Stock != 1 || got.LockedStock != 1 || sum != 1 || last.ChangeType != int8(inventory.FromPool) || last.ChangeNum != -9 ||
			last.BeforeStock != 10 || last.AfterStock != 1 || got.Sold != 0 {
			t.Errorf("after the return: pool %+v, ledger sum %d, last row %+v; want stock 1, locked 1, -9 (10 → 1) returned, none sold", got, sum, last)
		}
		if sk := db.Client.Sku.GetX(ctx, s.ID); sk.Stock != 19 || mainSum(t, db, s.ID) != 19 {
			t.Errorf("main stock %d (ledger %d) after the return, want 19", sk.Stock, mainSum(t, db, s.ID))
		}

		if err := inTx(func(ctx context.Context, tx *ent.Tx) error {
			return inventory.ReleasePool(ctx, tx, inventory.BizOrder, "o-1", line(1), time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		got, _ = inv.Pool(ctx, p.ID)
		moved := db.Client.StockLog.Query().Where(stocklog.BizSn("o-1")).Order(ent.Asc(stocklog.FieldID)).AllX(ctx)
		if got.Stock != 0 || got.LockedStock != 0 || got.Sold != 0 || len(moved) != 2 ||
			moved[0].PoolID != p.ID || moved[0].ChangeNum != -1 || moved[0].ChangeType != int8(inventory.FromPool) || moved[0].BizType != inventory.BizOrder ||
			moved[1].PoolID != 0 || moved[1].ChangeNum != 1 || moved[1].ChangeType != int8(inventory.FromPool) || moved[1].AfterStock != 20 {
			t.Errorf("a release after the return: pool %+v, rows %+v; want stock 0, none sold, -1 on the pool and +1 (→ 20) on main stock, type 8, biz order", got, moved)
		}
		if sk := db.Client.Sku.GetX(ctx, s.ID); sk.Stock != 20 || mainSum(t, db, s.ID) != 20 {
			t.Errorf("main stock %d (ledger %d) after the release, want 20", sk.Stock, mainSum(t, db, s.ID))
		}
	})
}
