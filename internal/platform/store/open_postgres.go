package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// openPostgres opens the main pool and the batch pool (DB.Batch) through
// pgx's database/sql driver. dsn is a libpq URL or key=value string.
func openPostgres(dsn string, size pools, wrap ConnectorWrapper) (opened, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return opened{}, fmt.Errorf("postgres DSN: %w", err)
	}
	// Times are stored and read in UTC, as on MySQL (Loc) and SQLite.
	cfg.RuntimeParams["timezone"] = "UTC"
	// Str in the batch's text doubles quotes and nothing else: backslashes
	// must be plain characters (the default since 9.1; a server set
	// otherwise must not change what a buyer's remark reads as).
	cfg.RuntimeParams["standard_conforming_strings"] = "on"
	// A statement's parameter types come from the server, described once
	// per text and kept: a JSON column takes a string, an untyped mark
	// takes its column's type. (QueryExecModeExec would type them by Go
	// type, a round trip less the first time a text is seen and wrong for
	// jsonb.)
	cfg.DefaultQueryExecMode = pgx.QueryExecModeCacheDescribe
	conn := rebinding{stdlib.GetConnector(*cfg)}
	main := wrap.open("postgresql", conn)
	// A pool per instance, against max_connections (100 by default):
	// docs/operations.md, "PostgreSQL"; DefaultMaxConns says why its size.
	main.SetMaxOpenConns(size.main)
	main.SetMaxIdleConns(size.main)
	main.SetConnMaxLifetime(30 * time.Minute)
	// The batch sends its statements as one simple-protocol query
	// (conn_postgres.go); its own small pool, as on MySQL.
	batch := wrap.open("postgresql", conn)
	batch.SetMaxOpenConns(size.batch)
	batch.SetMaxIdleConns(size.batch)
	batch.SetConnMaxLifetime(30 * time.Minute)
	return opened{db: main, batch: batch, dialect: postgresDialect{},
		kind: func(context.Context, *sql.DB) (Kind, error) { return Postgres, nil }}, nil
}
