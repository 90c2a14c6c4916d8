package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// openMySQL opens the main pool and the batch pool (DB.Batch).
func openMySQL(dsn string) (opened, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return opened{}, fmt.Errorf("mysql DSN: %w", err)
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	// One round trip per statement: every extra round trip made while a hot SKU
	// row is locked costs everyone queued on it.
	cfg.InterpolateParams = true
	// Affected rows count changed rows only: CAS updates are checked by
	// their affected rows, and a found-rows count would also count a row
	// an UPDATE matched without changing it.
	cfg.ClientFoundRows = false
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	if _, ok := cfg.Params["charset"]; !ok {
		cfg.Params["charset"] = "utf8mb4"
	}
	main, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return opened{}, err
	}
	main.SetMaxOpenConns(64)
	main.SetMaxIdleConns(64)
	main.SetConnMaxLifetime(30 * time.Minute)
	// The group-commit batch sends its writes as one multi-statement query
	// (checkout/batch_mysql.go), its values written inline by Text (plain
	// ASCII quoted, anything else as a hex literal: nothing to escape).
	// Only its own pool takes several statements per query, so no other
	// statement can carry a second one.
	cfg.MultiStatements = true
	batch, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		main.Close()
		return opened{}, err
	}
	// A few batches are in flight at once (checkout's GroupInFlight, with
	// one rerun each): a small pool, never waited on in practice.
	batch.SetMaxOpenConns(8)
	batch.SetMaxIdleConns(8)
	batch.SetConnMaxLifetime(30 * time.Minute)
	return opened{db: main, batch: batch, dialect: mysqlDialect{}, kind: mysqlKind}, nil
}

// mysqlKind tells MariaDB from MySQL by its version.
func mysqlKind(ctx context.Context, db *sql.DB) (Kind, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&v); err != nil {
		return 0, fmt.Errorf("reading its version: %w", err)
	}
	if strings.Contains(strings.ToLower(v), "mariadb") {
		// A Galera node: its conflicts are retried more (wsrep_mysql.go).
		if on, err := wsrepOn(ctx, db); err == nil && on {
			galera.Store(true)
		}
		return MariaDB, nil
	}
	return MySQL, nil
}
