package store

import (
	"context"

	"entgo.io/ent/dialect"
)

// mysqlDialect is MySQL and MariaDB: what differs between the two (MariaDB's
// compound statements) is the batch's, chosen by Kind.
type mysqlDialect struct{}

func init() { register(mysqlDialect{}) }

func (mysqlDialect) Name() string { return dialect.MySQL }

// ShareClause: MariaDB (10.11) has no FOR SHARE; both spell this.
func (mysqlDialect) ShareClause() string  { return "LOCK IN SHARE MODE" }
func (mysqlDialect) UpdateClause() string { return "FOR UPDATE" }

// ClaimClause: SKIP LOCKED is MariaDB's from 10.6 and MySQL's from 8.0;
// older servers refuse the statement.
func (mysqlDialect) ClaimClause() string { return "FOR UPDATE SKIP LOCKED" }

func (mysqlDialect) insertID(ctx context.Context, e ExecQuerier, q string, args []any) (int64, error) {
	return lastInsertID(ctx, e, q, args)
}

func (mysqlDialect) insertNew(ctx context.Context, e ExecQuerier, q string, args []any) (int64, bool, error) {
	return insertUnlessDuplicate(ctx, e, q, args)
}

func (mysqlDialect) indexed(table, index string) string {
	return table + " FORCE INDEX (" + index + ")"
}

// lock: the locking read of the rows is the lock (lock.go).
func (mysqlDialect) lock(context.Context, Execer, LockSpace, LockMode, []int64) error { return nil }

func (mysqlDialect) ensureClause(key []string) string {
	return " ON DUPLICATE KEY UPDATE " + key[0] + " = " + key[0]
}
