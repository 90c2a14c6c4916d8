package inventory

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/goods"
	"storefront/internal/platform/store"
)

// The lock order of every transaction that writes a goods' SKU, stock or
// listing rows (docs/checkout.md, "Lock order"):
//
//	category tree (S for goods edits, X for tree changes) → goods rows
//	(ascending id) → SKU rows (ascending id) → pool rows (ascending id)
//	→ listing rows
//
// The tree comes first because a listing rewrite reads it (shared) and a
// category move holds it exclusively before it locks the goods of the
// moved subtree: every catalog goods edit takes the tree shared before its
// goods row (bumpGoods → listing.LockTree). Stock movements never read the
// tree, so they start at the goods.
//
// A catalog edit takes its goods row exclusively first (catalog's bumpGoods,
// listing.Refresh) and only then writes the SKU's terms and the listing,
// whose rewrite reads every SKU row of the goods. A stock movement takes
// the goods rows of its SKUs shared first (lockGoods), before any SKU row.
// So an edit and a movement of the same goods never both hold rows the
// other waits for: the edit waits for the movements in flight to commit,
// the movements after it for the edit (its exclusive request queues ahead
// of later shared ones, so edits do not starve). Movements share the goods
// lock with each other and keep their own order below it: SKU rows in
// ascending id, then pools, then listing rows.
//
// On SQLite the one writer serialises transactions and the lock is a no-op.
// On PostgreSQL the goods and tree locks are advisory locks taken before a
// plain read (store.Lock): its row locks let a stream of shared lockers
// starve an exclusive one, which InnoDB's queue does not.

// lockGoods takes the shared lock on the goods rows of a stock movement.
func lockGoods(ctx context.Context, tx *ent.Tx, ids ...int64) error {
	if len(ids) == 0 {
		return nil
	}
	ids = distinct(ids)
	if err := store.Lock(ctx, tx, store.GoodsLock, store.Shared, ids...); err != nil {
		return err
	}
	var rows []struct {
		ID int64 `sql:"id"`
	}
	err := tx.Goods.Query().Where(goods.IDIn(distinct(ids)...)).
		Modify(func(s *entsql.Selector) { s.Select(s.C(goods.FieldID)); store.ShareLock(s) }).Scan(ctx, &rows)
	if err != nil {
		return fmt.Errorf("locking goods %v: %w", ids, err)
	}
	return nil
}

// distinct is ids sorted ascending without repeats.
func distinct(ids []int64) []int64 {
	return slices.Compact(slices.SortedFunc(slices.Values(ids), cmp.Compare[int64]))
}

// idsOf is the id f gives of each of xs (goods for lockGoods, SKUs for
// the listing).
func idsOf[T any](xs []T, f func(T) int64) []int64 {
	ids := make([]int64, len(xs))
	for i, x := range xs {
		ids[i] = f(x)
	}
	return ids
}

func goodsOf(moves []Movement) []int64 {
	return idsOf(moves, func(m Movement) int64 { return m.GoodsID })
}

func goodsOfLines(lines []RestoreLine) []int64 {
	return idsOf(lines, func(l RestoreLine) int64 { return l.GoodsID })
}

// LockGoods takes the shared goods lock (lockGoods) for a seller that reads
// the terms of the goods' SKUs inside its transaction before it takes their
// stock: no catalog edit of those goods can commit until it does.
func LockGoods(ctx context.Context, tx *ent.Tx, ids ...int64) error {
	return lockGoods(ctx, tx, ids...)
}

// GoodsOfSKUs reads the goods of the SKUs ids (ascending, distinct), for
// a MySQL batch that locks its SKU rows before it reads them: it locks
// their goods first (BatchEngine.LockGoods). Read it before the transaction
// begins: goods_id never changes, and a plain read inside the transaction
// would fix its snapshot before the rows are locked, so the batch's read
// under the lock would see the stock of that older snapshot. (A locking
// read of the goods through a subquery of sku would lock the SKU rows
// before the goods.)
func GoodsOfSKUs(ctx context.Context, q Querier, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	goods, err := readIDs(ctx, q, "SELECT DISTINCT goods_id FROM sku WHERE id IN ("+store.Marks(len(ids))+")", anyIDs(ids))
	return distinct(goods), err
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
