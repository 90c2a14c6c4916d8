package store

import (
	"context"
	"fmt"

	entsql "entgo.io/ent/dialect/sql"
)

// Dialect is what one database server's SQL spells its own way: the
// clauses of locking reads, how a new row's id comes back, how an error
// reads. Each is written in the files named for its dialect
// (dialect_sqlite.go, dialect_mysql.go, dialect_postgres.go); the rest of
// the code asks the DB's Dialect, or store's functions below, and never
// compares dialect names itself.
//
// Raw SQL anywhere in this code base is written one way: `?` marks its
// arguments and backticks quote the one reserved word among the columns
// (idempotency_key.key). SQLite and MySQL read that as it is; PostgreSQL's
// connections rewrite both as they send (rebind_postgres.go).
type Dialect interface {
	// Name is ent's name for the SQL spoken (entgo.io/ent/dialect).
	Name() string
	// ShareClause and UpdateClause end a locking read ("" where the
	// database has no row locks: SQLite's writer holds the whole file).
	ShareClause() string
	UpdateClause() string
	// ClaimClause ends an exclusive locking read that passes over the rows
	// another transaction holds locked instead of waiting for them, so that
	// several workers reading the same queue each take rows of their own
	// ("" where the database has no row locks).
	ClaimClause() string
	// insertID runs the one-row INSERT q and returns the new row's id.
	insertID(ctx context.Context, e ExecQuerier, q string, args []any) (int64, error)
	// insertNew runs the one-row INSERT q unless a row with one of its
	// unique keys exists, and returns the new row's id, or false. The
	// transaction goes on either way.
	insertNew(ctx context.Context, e ExecQuerier, q string, args []any) (int64, bool, error)
	// ensureClause ends an INSERT of one row so that it writes nothing
	// when a row with the unique key exists, and leaves that row locked
	// exclusively where the database has row locks (EnsureRow).
	ensureClause(key []string) string
	// lock takes keyed locks (lock.go) where they are not row locks.
	lock(ctx context.Context, e Execer, space LockSpace, mode LockMode, keys []int64) error
	// indexed names table for a statement that must read it through index
	// (Indexed), where the database lets a statement say so.
	indexed(table, index string) string
}

// ExecQuerier is a transaction or a client that can also read.
type ExecQuerier interface {
	Execer
	Querier
}

var dialects = map[string]Dialect{}

func register(d Dialect) { dialects[d.Name()] = d }

// dialectOf is the Dialect ent names name.
func dialectOf(name string) Dialect {
	d, ok := dialects[name]
	if !ok {
		panic(fmt.Sprintf("store: no dialect %q", name))
	}
	return d
}

// ShareLock makes s a shared locking read where the database has row locks.
func ShareLock(s *entsql.Selector) { lock(s, dialectOf(s.Dialect()).ShareClause()) }

// UpdateLock makes s an exclusive locking read where the database has row
// locks.
func UpdateLock(s *entsql.Selector) { lock(s, dialectOf(s.Dialect()).UpdateClause()) }

// ClaimLock makes s a claim: an exclusive locking read that skips the rows
// another transaction holds (Dialect.ClaimClause), where the database has
// row locks.
func ClaimLock(s *entsql.Selector) { lock(s, dialectOf(s.Dialect()).ClaimClause()) }

func lock(s *entsql.Selector, clause string) {
	if clause != "" {
		// The clause as the dialect spells it: ent's ForShare writes FOR
		// SHARE, which MariaDB 10.11 (the version tested) does not know.
		s.ForShare(entsql.WithLockClause(clause))
	}
}

// Indexed names table, in a statement of the transaction of ctx (WithTx),
// so that it is read through index: MySQL's FORCE INDEX, and the table's
// name alone elsewhere. A locking read (on MySQL, any subquery of a write)
// that the optimizer makes a scan of the whole table locks every row of it,
// as it does when the rows wanted are most of the table's (MariaDB 10.11
// on the demo catalog's 500-SKU goods: the other goods' SKU rows, which
// their sales hold, were waited for and deadlocked).
func Indexed(ctx context.Context, table, index string) string {
	return dialectIn(ctx).indexed(table, index)
}

// InsertID runs the one-row in on e and returns the new row's id.
func (d *DB) InsertID(ctx context.Context, e ExecQuerier, in *Insert) (int64, error) {
	q, args := in.SQL()
	return d.Dialect.insertID(ctx, e, q, args)
}

// EnsureRow runs the one-row in on e, inside a transaction of WithTx,
// unless a row with the unique key exists: either way the row exists
// afterwards and the transaction goes on. Where the database has row locks
// the existing row is then locked exclusively at once (MySQL's ON
// DUPLICATE KEY UPDATE): a plain INSERT meeting the key takes a shared
// lock, and two transactions upgrading theirs to update the row deadlock.
func EnsureRow(ctx context.Context, e Execer, in *Insert, key ...string) error {
	q, args := in.SQL()
	_, err := e.ExecContext(ctx, q+dialectIn(ctx).ensureClause(key), args...)
	return err
}

// InsertNew runs the one-row in on e, inside a transaction of WithTx,
// unless a row with one of its unique keys exists: the new row's id, or
// false when it existed. A business key's second write ("already done")
// leaves the transaction usable, which a plain INSERT's duplicate does not
// on PostgreSQL (the transaction is aborted).
func InsertNew(ctx context.Context, e ExecQuerier, in *Insert) (id int64, inserted bool, err error) {
	q, args := in.SQL()
	return dialectIn(ctx).insertNew(ctx, e, q, args)
}
