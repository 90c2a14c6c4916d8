package store

import (
	"context"
	"strings"

	"entgo.io/ent/dialect"
)

// sqliteDialect: one writer holds the whole database from BEGIN (IMMEDIATE
// transactions, open_sqlite.go), so a read inside a writing transaction is
// already the latest and needs no lock clause.
type sqliteDialect struct{}

func init() { register(sqliteDialect{}) }

func (sqliteDialect) Name() string         { return dialect.SQLite }
func (sqliteDialect) ShareClause() string  { return "" }
func (sqliteDialect) UpdateClause() string { return "" }
func (sqliteDialect) ClaimClause() string  { return "" }

func (sqliteDialect) insertID(ctx context.Context, e ExecQuerier, q string, args []any) (int64, error) {
	return lastInsertID(ctx, e, q, args)
}

func (sqliteDialect) insertNew(ctx context.Context, e ExecQuerier, q string, args []any) (int64, bool, error) {
	return insertUnlessDuplicate(ctx, e, q, args)
}

// insertUnlessDuplicate: a duplicate fails the statement only, and the
// transaction goes on (SQLite, MySQL).
func insertUnlessDuplicate(ctx context.Context, e ExecQuerier, q string, args []any) (int64, bool, error) {
	id, err := lastInsertID(ctx, e, q, args)
	if IsDuplicate(err) {
		return 0, false, nil
	}
	return id, err == nil, err
}

// indexed: the one writer locks the whole database anyway.
func (sqliteDialect) indexed(table, _ string) string { return table }

// lock: the one writer holds the database from BEGIN.
func (sqliteDialect) lock(context.Context, Execer, LockSpace, LockMode, []int64) error { return nil }

func lastInsertID(ctx context.Context, e ExecQuerier, q string, args []any) (int64, error) {
	res, err := e.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func (sqliteDialect) ensureClause(key []string) string {
	return " ON CONFLICT (" + strings.Join(key, ", ") + ") DO NOTHING"
}
