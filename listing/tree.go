package listing

import (
	"context"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"

	"storefront/ent"
	"storefront/ent/category"
)

// parents reads every category's parent for a goods' scopes, inside the
// writer's transaction. On MySQL/MariaDB the read is a shared lock
// (tree_mysql.go): it waits for a tree change in flight (which holds the
// tree with FOR UPDATE, catalog/category_lock.go) and then reads the tree
// as committed, where a plain read of this transaction's REPEATABLE READ
// snapshot gave a goods moved into a category at the same time as that
// category's move the scopes of before the move (19 of 20 rounds of a
// goods edit racing a move left stale rows). Goods writers only share it,
// so they never wait on each other here. SQLite's writer holds the write
// lock from BEGIN: a plain read is already the latest.
func parents(ctx context.Context, tx *ent.Tx) (map[int64]*int64, error) {
	var rows []struct {
		ID     int64  `sql:"id"`
		Parent *int64 `sql:"parent_id"`
	}
	err := tx.Category.Query().Modify(func(s *entsql.Selector) {
		s.Select(category.FieldID, category.FieldParentID)
		if s.Dialect() == dialect.MySQL {
			s.ForShare(entsql.WithLockClause(mysqlShareLock))
		}
	}).Scan(ctx, &rows)
	if err != nil {
		return nil, err
	}
	parent := make(map[int64]*int64, len(rows))
	for _, r := range rows {
		parent[r.ID] = r.Parent
	}
	return parent, nil
}
