package store

import (
	"context"
)

// LockSpace names what a keyed lock locks: the goods rows by id, or the
// category tree as a whole (one key, 0).
//
// The lock order (internal/inventory/goods_lock.go) puts the tree and the goods
// before any other row. A stock movement holds its goods shared and an
// admin's edit exclusively, so the locks must queue fairly: an edit must
// not wait for ever behind a stream of sales. InnoDB queues an exclusive
// request ahead of later shared ones, so on MySQL the lock is the locking
// read of the rows themselves (ShareLock, UpdateLock on the read that
// follows) and Lock takes nothing. PostgreSQL's row locks do not: a new
// FOR SHARE is granted beside the ones held while an UPDATE waits, and a
// goods edit beside a hot SKU's sales waited 9 minutes (its test's
// timeout). There Lock takes an advisory lock, which queues like any
// heavyweight lock, and the reads after it are plain (lock_postgres.go).
// SQLite's one writer needs neither.
type LockSpace int64

const (
	GoodsLock LockSpace = 1
	TreeLock  LockSpace = 2
)

// LockMode is shared or exclusive.
type LockMode bool

const (
	Shared    LockMode = false
	Exclusive LockMode = true
)

// Lock takes the locks of keys (ascending: the lock order within a space)
// of space inside the transaction of ctx (WithTx), where the dialect has
// such locks apart from its row locks (see LockSpace).
func Lock(ctx context.Context, e Execer, space LockSpace, mode LockMode, keys ...int64) error {
	if len(keys) == 0 {
		return nil
	}
	return dialectIn(ctx).lock(ctx, e, space, mode, keys)
}
