package listing

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/ent/category"
	"storefront/internal/platform/store"
)

// parents reads every category's parent for a goods' scopes, inside the
// writer's transaction. On MySQL/MariaDB the read is a shared lock
// (store.ShareLock): it waits for a tree change in flight (which holds the
// tree with FOR UPDATE, internal/catalog/category_lock.go) and then reads the tree
// as committed, where a plain read of this transaction's REPEATABLE READ
// snapshot gave a goods moved into a category at the same time as that
// category's move the scopes of before the move (19 of 20 rounds of a
// goods edit racing a move left stale rows). Goods writers only share it,
// so they never wait on each other here. SQLite's writer holds the write
// lock from BEGIN: a plain read is already the latest.
//
// The read takes whole rows, so InnoDB scans the primary key, in id order,
// as a tree change's FOR UPDATE does (catalog's lockedTree). Reading only
// id and parent_id scanned the parent_id index instead, whose order is not
// the ids' and changes with every move, so a goods edit's shared scan and a
// move's exclusive one could each hold rows the other wants next (one
// deadlock at an edit's first read of the tree was seen in a test with a
// tiny table; the cause is inferred, not isolated).
func parents(ctx context.Context, tx *ent.Tx) (map[int64]*int64, error) {
	if err := store.Lock(ctx, tx, store.TreeLock, store.Shared, 0); err != nil {
		return nil, err
	}
	rows, err := tx.Category.Query().Order(category.ByID()).Modify(store.ShareLock).All(ctx)
	if err != nil {
		return nil, err
	}
	parent := make(map[int64]*int64, len(rows))
	for _, r := range rows {
		parent[r.ID] = r.ParentID
	}
	return parent, nil
}

// LockTree takes the category tree's shared lock (the read parents makes)
// as the first lock of a goods edit, before its goods row: the lock order is
// category tree (S for goods edits, X for tree changes) → goods → SKU → pool
// → listing (internal/inventory/goods_lock.go). A category move holds the tree
// exclusively and then locks the goods of the moved subtree (refresh); an
// edit that locked its goods row first and read the tree only in Refresh
// held what the move waited for and waited for the move (a deadlock on
// MariaDB, docs/listing.md). Stock movements
// never read the tree. On SQLite the one writer makes it a plain read.
func LockTree(ctx context.Context, tx *ent.Tx) error {
	if _, err := parents(ctx, tx); err != nil {
		return fmt.Errorf("locking the category tree: %w", err)
	}
	return nil
}
