package inventory

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
	"storefront/internal/vocab/enums"
)

// LockGoodsPostgres takes the shared goods lock (lockGoods) on q, inside
// its transaction, before any SKU row: on PostgreSQL the goods' advisory
// locks (internal/platform/store/lock.go says why not their rows').
func LockGoodsPostgres(ctx context.Context, q Querier, goods []int64) error {
	if len(goods) == 0 {
		return nil
	}
	rs, err := q.QueryContext(ctx, store.PostgresLockSQL(store.GoodsLock, store.Shared, distinct(goods)))
	if err != nil {
		return fmt.Errorf("locking goods %v: %w", goods, err)
	}
	return rs.Close()
}

// WriteGoodsLocksPostgres renders, into the group-commit batch's query on
// PostgreSQL, the shared goods lock of goods (ascending): the batch's
// first lock, before its inserts and SKU rows (goods_lock.go), so that a
// batch waiting for it (behind an admin's edit) holds nothing.
func WriteGoodsLocksPostgres(q *store.Text, goods []int64) {
	if len(goods) == 0 {
		return
	}
	q.SQL(store.PostgresLockSQL(store.GoodsLock, store.Shared, distinct(goods)))
	q.SQL("; ")
}

// WriteGoodsCheckPostgres renders, after WriteGoodsLocksPostgres, the check
// that goods is still on shelf under the name and in the stock mode its
// sales were decided on: read under the goods lock, so no edit commits
// between it and the batch's COMMIT. A goods that changed fails the
// statement (division_by_zero, the batch's guard: see WriteTakesPostgres).
func WriteGoodsCheckPostgres(q *store.Text, goods int64, terms Terms, lock bool) {
	q.SQL("SELECT 1 / COUNT(*) FROM goods WHERE ")
	goodsOnSale(q, goods, terms, lock)
	q.SQL("; ")
}

// goodsOnSale is the condition on a goods row of being sold as read: on
// shelf, under the name and in the stock mode read.
func goodsOnSale(w store.Statement, goods int64, terms Terms, lock bool) {
	w.SQL("id = ")
	w.Int(goods)
	w.SQL(" AND status = ")
	w.Str(string(enums.GoodsOnShelf))
	w.SQL(" AND name = ")
	w.Str(terms.GoodsName)
	w.SQL(" AND stock_mode = ")
	w.Str(string(modeOf(lock)))
}
