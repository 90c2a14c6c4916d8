package inventory

import (
	"context"
	"fmt"

	"storefront/internal/platform/store"
)

// ShareLockMySQL is the shared-lock clause of a locking read on MySQL and
// MariaDB (MariaDB before 10.6 has no FOR SHARE).
const ShareLockMySQL = "LOCK IN SHARE MODE"

// GoodsOfSKUs reads the goods of the SKUs ids (ascending, distinct), for
// a MySQL batch that locks its SKU rows before it reads them: it locks
// their goods first (LockGoodsMySQL). Read it before the transaction
// begins: goods_id never changes, and a plain read inside the transaction
// would fix its snapshot before the rows are locked, so the batch's read
// under the lock would see the stock of that older snapshot. (A locking
// read of the goods through a subquery of sku would lock the SKU rows
// before the goods.)
func GoodsOfSKUs(ctx context.Context, q Querier, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	goods, err := readIDs(ctx, q, "SELECT DISTINCT goods_id FROM sku WHERE id IN ("+store.Marks(len(ids))+")", args)
	return distinct(goods), err
}

// LockGoodsMySQL takes the shared goods lock (lockGoods) on q, inside its
// transaction, before any SKU row.
func LockGoodsMySQL(ctx context.Context, q Querier, goods []int64) error {
	if len(goods) == 0 {
		return nil
	}
	args := make([]any, len(goods))
	for i, g := range goods {
		args[i] = g
	}
	_, err := readIDs(ctx, q, "SELECT id FROM goods WHERE id IN ("+store.Marks(len(args))+") ORDER BY id "+ShareLockMySQL, args)
	return err
}

func readIDs(ctx context.Context, q Querier, query string, args []any) ([]int64, error) {
	rs, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading goods: %w", err)
	}
	defer rs.Close()
	var ids []int64
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rs.Err()
}
