package main

import (
	"context"
	"fmt"
	"time"

	"storefront/internal/platform/store"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// freshPostgres creates an empty database on the PostgreSQL server of dsn
// (a libpq URL or key=value) and returns its store spec and a cleanup that
// drops it, its connections with it.
func freshPostgres(dsn string) (string, string, func(), error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", "", nil, fmt.Errorf("-db postgres: %w", err)
	}
	admin := stdlib.OpenDB(*cfg)
	name := fmt.Sprintf("sfbench_%d", time.Now().UnixNano())
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		admin.Close()
		return "", "", nil, err
	}
	cleanup := func() {
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		admin.Close()
	}
	return "postgres:" + store.PostgresURL(cfg, name), "", cleanup, nil
}
