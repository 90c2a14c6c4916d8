package catalog

import (
	"context"
	"fmt"

	"storefront/ent"
	"storefront/internal/platform/store"
)

// lockedTree reads the whole tree for a transaction that changes it and
// keeps every other such transaction from changing it until this one ends.
// It must be the transaction's first statement.
//
// Why the whole tree and not the rows a change touches: the checks read
// more than those rows. A move reads the new parent's ancestors (cycle,
// depth) and the moved category's descendants (depth), a create or move
// the parent's children (how many), a create the slugs. Under MariaDB's
// REPEATABLE READ those were plain reads of the transaction's snapshot, so
// two crosswise moves each saw the other's category still a root and both
// committed: a loop (14-15 of 15 tries), and with it trees 6 levels deep
// and 108 children under one parent. Locking both ancestor chains in id
// order would cover the cycle, but not the descendants a concurrent move
// brings under one of them, nor a parent's children, which are rows that
// do not exist yet (gap locks on the parent_id index). The tree is small
// (at most MaxCategories rows) and changed by admins only, so every change
// takes the tree whole: one statement, and changes of the tree run one at
// a time.
//
// MySQL/MariaDB: SELECT … FOR UPDATE over the whole table locks every row
// and the gap after the last (next-key locks on the primary key), so a
// second change waits at its first statement for the first to commit and
// then reads the rows as committed, not its snapshot; and because this
// read comes first, the transaction's later plain reads (the goods of the
// moved subtree) take their snapshot after it. Plain readers (category
// pages, listings) never wait on it; a goods edit's listing write reads the
// tree with a shared lock (internal/listing/tree.go), so it waits for a tree change
// in flight and lists the goods under the changed tree. An empty table has only the gap to lock, and gap locks do not
// exclude each other: two first categories created at once deadlock on
// their inserts, and store.WithTx retries the one MariaDB picks.
//
// SQLite: every transaction begins IMMEDIATE (store.openSQLite), which
// takes the database's one write lock at BEGIN, so changes of the tree
// already run one at a time and read the latest rows; SQLite has no FOR
// UPDATE (ent refuses to build one), so the read is a plain one.
//
// PostgreSQL: FOR UPDATE locks the rows there are, and a second change waits
// on them; but its READ COMMITTED statement returns the rows of the
// snapshot it began with, without a category the first change created. So
// the tree is read again once it is locked: a new statement, a new snapshot
// (on MySQL the first plain read takes its snapshot now, after the lock).
func (s *Service) lockedTree(ctx context.Context, tx *ent.Tx) (*tree, error) {
	if err := store.Lock(ctx, tx, store.TreeLock, store.Exclusive, 0); err != nil {
		return nil, store.Classify(fmt.Errorf("locking the category tree: %w", err))
	}
	if _, err := tx.Category.Query().Modify(store.UpdateLock).All(ctx); err != nil {
		return nil, store.Classify(fmt.Errorf("locking the category tree: %w", err))
	}
	rows, err := tx.Category.Query().All(ctx)
	if err != nil {
		return nil, store.Classify(fmt.Errorf("locking the category tree: %w", err))
	}
	return treeOf(rows), nil
}
