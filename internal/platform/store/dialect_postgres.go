package store

import (
	"context"
	"strings"

	"entgo.io/ent/dialect"
)

// postgresDialect is PostgreSQL (15), through pgx.
type postgresDialect struct{}

func init() { register(postgresDialect{}) }

func (postgresDialect) Name() string { return dialect.Postgres }

// ShareClause: none; Lock took an advisory lock before the read (lock.go).
func (postgresDialect) ShareClause() string  { return "" }
func (postgresDialect) UpdateClause() string { return "FOR UPDATE" }
func (postgresDialect) ClaimClause() string  { return "FOR UPDATE SKIP LOCKED" }

// indexed: the planner chooses; a subquery of a write locks nothing.
func (postgresDialect) indexed(table, _ string) string { return table }

// insertNew: a duplicate key aborts a PostgreSQL transaction, so the
// INSERT itself steps aside.
func (postgresDialect) insertNew(ctx context.Context, e ExecQuerier, q string, args []any) (int64, bool, error) {
	id, err := returningID(ctx, e, q+" ON CONFLICT DO NOTHING", args)
	return id, id != 0, err
}

// insertID: PostgreSQL has no LAST_INSERT_ID; the row says its id.
func (postgresDialect) insertID(ctx context.Context, e ExecQuerier, q string, args []any) (int64, error) {
	return returningID(ctx, e, q, args)
}

// returningID runs q with RETURNING id: the id, or 0 when no row was written.
func returningID(ctx context.Context, e ExecQuerier, q string, args []any) (id int64, err error) {
	rs, err := e.QueryContext(ctx, q+" RETURNING id", args...)
	if err != nil {
		return 0, err
	}
	defer rs.Close()
	if rs.Next() {
		err = rs.Scan(&id)
	}
	if err == nil {
		err = rs.Err()
	}
	return id, err
}

// ensureClause: DO NOTHING locks nothing; the caller's UPDATE then locks
// the row (PostgreSQL takes no shared lock on the key to upgrade).
func (postgresDialect) ensureClause(key []string) string {
	return " ON CONFLICT (" + strings.Join(key, ", ") + ") DO NOTHING"
}
