package inventory

import (
	"context"
	"database/sql"
	"fmt"

	"storefront/ent/sku"
	"storefront/internal/platform/store"
)

// Batch is a group-commit transaction that a database server writes in one
// round trip: the caller's rows first (orders, lines, events: nothing of
// them needs a stock lock), then its StockWrite, then COMMIT unless a guard
// failed. From the first stock lock to COMMIT the server runs alone, with
// no network trip between: on a hot SKU that span bounds throughput.
type Batch struct {
	StockWrite
	// Begin opens the transaction in the same trip; otherwise it is open
	// (BatchEngine.Begin), with the goods and maybe the SKU rows locked.
	Begin bool
	// Rows writes the caller's inserts, each statement ended by "; ".
	Rows func(r *Rows) error
	// Expect is how many rows the statements Rows counted (Rows.Count)
	// must have written, or the batch does not commit; 0 checks nothing.
	Expect int64
	// Returned writes, after COMMIT, statements whose rows Scan reads
	// (MySQL, which has no RETURNING); nil for none.
	Returned func(r *Rows)
	// Scan reads every row the query returns (MySQL's; PostgreSQL's come
	// back in Written.Results).
	Scan func(*sql.Rows) error
	// BeforeCommit and AfterCommit let a test fail the statement just
	// before COMMIT (the error BeforeCommit returns is the batch's answer)
	// or just after it.
	BeforeCommit func(q *store.Text) error
	AfterCommit  func(q *store.Text)
}

// Rows is the statement the caller's rows are written into: store's text
// of the engine's dialect.
type Rows struct {
	*store.Text
	count string
}

// Count counts the rows the statement just written wrote toward
// Batch.Expect (where the engine checks it: MariaDB's compound statement).
func (r *Rows) Count() { r.SQL(r.count) }

// Written is what a batch's query answered.
type Written struct {
	// PastCommit: the query failed after its COMMIT ran (MySQL). Not proof
	// of a commit on Galera, whose certification may still abort it: the
	// caller reads its rows back.
	PastCommit bool
	// Results are the statements' results (PostgreSQL).
	Results []store.PostgresResult
}

// BatchEngine writes a Batch on one database server's dialect.
type BatchEngine interface {
	// Begin opens the transaction on c with its own round trip, its lock
	// waits bounded by ctx's deadline (a rerun that locks before it reads).
	Begin(ctx context.Context, c *store.Conn) error
	// LockGoods takes the shared goods lock (goods_lock.go) of goods in the
	// open transaction, before any SKU row.
	LockGoods(ctx context.Context, c *store.Conn, goods []int64) error
	// Write writes b and commits it in one round trip on c. A guard that
	// failed is ErrMoved; any other error is the server's (a duplicate
	// key, a value refused, …), with the transaction ended or c's state
	// unknown (store.Conn then discards it).
	Write(ctx context.Context, c *store.Conn, b *Batch) (Written, error)
	// RefusedData reports an error the server answered for a value of one
	// row (a column refusing it, a constraint on the row), as opposed to
	// one of the batch as a whole: the batch's orders then go one by one.
	RefusedData(err error) bool
}

// LockSKUs locks the SKU rows ids in ascending order, in the transaction
// open on c (a rerun that locks before it reads).
func LockSKUs(ctx context.Context, c *store.Conn, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	args := anyIDs(distinct(ids))
	rs, err := c.QueryContext(ctx, "SELECT id FROM "+sku.Table+" WHERE id IN ("+store.Marks(len(args))+") ORDER BY id FOR UPDATE", args...)
	if err != nil {
		return fmt.Errorf("locking SKU rows %v: %w", ids, err)
	}
	return rs.Close()
}

// anyIDs is ids as a statement's arguments.
func anyIDs(ids []int64) []any {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return args
}
